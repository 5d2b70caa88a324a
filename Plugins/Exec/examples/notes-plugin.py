#!/usr/bin/env python3
"""An example replica source plugin: a folder of notes, one JSON file each.

Each `<name>.json` in NOTES_DIR holds {"title": ..., "body": ..., "tags": [...], "people": [...]}
and becomes one searchable item identified by <name>. The plugin speaks replica's protocol
(Plugins/README.md) on stdin and stdout: it sends every note that changed since the checkpoint
replica gives it, commits them with a new checkpoint, says when it is caught up, answers pings and
hydration requests, and (in watch mode) looks for changes twice a second.

Usage, as a replica source:  replica sources add exec --account ACCOUNT -- python3 notes-plugin.py NOTES_DIR
"""
import json
import os
import queue
import sys
import threading


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def log(level, message):
    send({"type": "log", "level": level, "message": message})


def snapshot(folder):
    """Each note's fingerprint: what changes when the note does."""
    notes = {}
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            path = os.path.join(folder, name)
            try:
                info = os.stat(path)
            except FileNotFoundError:
                continue
            notes[name[:-5]] = "%d:%d" % (info.st_size, info.st_mtime_ns)
    return notes


def read_note(folder, key):
    with open(os.path.join(folder, key + ".json"), encoding="utf-8") as handle:
        note = json.load(handle)
    attributes = {
        "title": str(note.get("title", key)),
        "textContent": str(note.get("body", "")),
        "contentType": "public.plain-text",
    }
    if note.get("tags"):
        attributes["keywords"] = [str(tag) for tag in note["tags"]]
    if note.get("people"):
        attributes["authorNames"] = [str(person) for person in note["people"]]
    return {"uniqueIdentifier": key, "attributes": attributes}


def checkpoint_of(notes):
    return json.dumps(notes, sort_keys=True)


def send_changes(folder, before, now):
    """Sends upserts and deletes for what differs between two snapshots, then one commit."""
    changed = False
    for key, stamp in now.items():
        if before.get(key) != stamp:
            try:
                send({"type": "upsert", "version": stamp, "item": read_note(folder, key)})
                changed = True
            except (OSError, ValueError) as error:
                log("error", "note %s cannot be read: %s" % (key, type(error).__name__))
    for key in before:
        if key not in now:
            send({"type": "delete", "uniqueIdentifier": key})
            changed = True
    if changed or before != now:
        send({"type": "commit", "checkpoint": checkpoint_of(now)})


def answer(folder, request, keys):
    items, gone = [], []
    for key in keys:
        try:
            item = read_note(folder, key)
            stamp = snapshot(folder).get(key)
            items.append(dict(item, version=stamp))
        except (OSError, ValueError):
            gone.append({"uniqueIdentifier": key, "reason": "the note is no longer there"})
    send({"type": "hydrated", "request": request, "items": items, "gone": gone})


def read_messages(inbox):
    """Reads replica's messages on a thread of their own, so the main loop can wait with a timeout."""
    for line in sys.stdin:
        if line.strip():
            inbox.put(json.loads(line))
    inbox.put({"type": "stop"})


def main():
    if len(sys.argv) != 2:
        sys.stderr.write("usage: notes-plugin.py NOTES_DIR\n")
        return 2
    folder = sys.argv[1]
    inbox = queue.Queue()
    threading.Thread(target=read_messages, args=(inbox,), daemon=True).start()
    start = inbox.get()
    mode = start.get("mode", "sync")
    try:
        known = json.loads(start.get("checkpoint") or "{}")
    except ValueError:
        known = {}
    if mode != "hydrate":
        now = snapshot(folder)
        send_changes(folder, known, now)
        known = now
        send({"type": "idle"})
    while True:
        try:
            message = inbox.get(timeout=0.5)
        except queue.Empty:
            message = None
        if message is not None:
            kind = message.get("type")
            if kind == "stop":
                return 0
            if kind == "ping":
                send({"type": "pong", "id": message.get("id")})
            elif kind == "hydrate":
                answer(folder, message.get("request"), message.get("identifiers", []))
        elif mode == "watch":
            now = snapshot(folder)
            if now != known:
                send_changes(folder, known, now)
                known = now


if __name__ == "__main__":
    sys.exit(main())
