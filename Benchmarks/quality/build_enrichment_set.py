#!/usr/bin/env python3
"""Message threads for the enrichers (summaries and priority) from Debian changelogs.

Every entry of a Debian changelog (/usr/share/doc/<package>/changelog.Debian.gz) becomes one message
of a thread, and each source package is a thread (its domain). An entry

    apt (2.6.1) bookworm; urgency=medium
                                               <- blank
      * Fix the thing (Closes: #123)
                                               <- blank
     -- Jane Doe <jane@example.org>  Tue, 20 Sep 2022 12:17:15 -0400

gives one JSON line shaped like the items `replica import` reads:

    {"uniqueIdentifier": "apt:2.6.1", "domainIdentifier": "changelog.apt",
     "attributes": {"contentType": "public.email-message", "title": "apt 2.6.1",
                    "textContent": "apt (2.6.1) bookworm; urgency=medium\n\n* Fix the thing (Closes: #123)",
                    "authors": [{"displayName": "Jane Doe", "handles": ["jane@example.org"]}],
                    "contentCreationDate": "2022-09-20T16:17:15Z"}}

The text's first line is the entry's header line, so the upload's urgency (urgency=high, ...) and its
distribution (e.g. bookworm-security) are part of what a classifier reads. The body is the entry's
lines with their common indentation removed. The date comes from the trailer line, read with
email.utils.parsedate_to_datetime, and is written in UTC.

Packages are source packages (the name on the header line). Binary packages of one source often
ship the same changelog, and some /usr/share/doc folders are symbolic links: the first file of a
source, in sorted folder order, is read and the others are skipped. A version that appears twice
in one changelog keeps its newest entry. Entries without a trailer line are skipped.

Output, in an order fixed by the input (packages sorted by name, each package's entries oldest
first, so a thread reads in order):

    data/changelog-messages.jsonl  every message (the newest --per-package entries per package)
    data/priority-sample.jsonl     80 of them, drawn with random.Random(7), each with "priority": null,
                                   for labelling by hand against PRIORITY-RUBRIC.md; the labels live
                                   in priority-labels.json. The sample depends on the changelogs
                                   installed and on the options, so keep the defaults when checking
                                   against the committed labels.

Run (Python 3.11, standard library only):

    python3 build_enrichment_set.py [--docs /usr/share/doc] [--packages N] [--per-package M]
                                    [--sample 80] [--out data]

--packages 0 and --per-package 0 mean no limit.
"""
import argparse, email.utils, glob, gzip, json, os, random, re, sys
from datetime import timezone

HEADER = re.compile(r"^(?P<package>[A-Za-z0-9][A-Za-z0-9.+-]*) \((?P<version>[^()\s]+)\)(?P<rest>.*)$")
TRAILER = re.compile(r"^ -- (?P<who>.*?)  ?(?P<date>\w{3}, .*)$")
SEED = 7


def read_changelog(path):
    """The entries of one changelog, newest first: dicts of package, version, header, body lines, trailer."""
    with gzip.open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    entries, current = [], None
    for line in text.splitlines():
        line = line.rstrip()
        header = HEADER.match(line)
        if header and not line.startswith(" "):
            current = {"package": header["package"], "version": header["version"], "header": line, "lines": []}
            continue
        if current is None:
            continue
        trailer = TRAILER.match(line)
        if trailer:
            current["who"], current["date"] = trailer["who"].strip(), trailer["date"].strip()
            entries.append(current)
            current = None
        else:
            current["lines"].append(line)
    return entries


def dedent(lines):
    """The body lines without leading and trailing blank lines and without their common indentation."""
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    indents = [len(l) - len(l.lstrip(" ")) for l in lines if l.strip()]
    cut = min(indents) if indents else 0
    return [l[cut:] if l.strip() else "" for l in lines]


def iso_date(text):
    """The trailer's date in ISO 8601 UTC, or None when it cannot be read."""
    try:
        date = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if date is None:
        return None
    if date.tzinfo is None:                      # "-0000": UTC, the time zone unknown
        date = date.replace(tzinfo=timezone.utc)
    return date.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def message(entry):
    name, address = email.utils.parseaddr(entry["who"])
    author = {"displayName": name or address or entry["who"]}
    author["handles"] = [address] if address else []
    body = "\n".join(dedent(entry["lines"]))
    attributes = {
        "contentType": "public.email-message",
        "title": f'{entry["package"]} {entry["version"]}',
        "textContent": entry["header"] + ("\n\n" + body if body else ""),
        "authors": [author],
    }
    date = iso_date(entry["date"])
    if date:
        attributes["contentCreationDate"] = date
    return {"uniqueIdentifier": f'{entry["package"]}:{entry["version"]}',
            "domainIdentifier": f'changelog.{entry["package"]}', "attributes": attributes}


def collect(docs, packages, per_package):
    """Messages of every source package, packages sorted by name, each oldest first."""
    by_source, seen_files = {}, set()
    for path in sorted(glob.glob(os.path.join(docs, "*", "changelog.Debian.gz"))):
        real = os.path.realpath(path)
        if real in seen_files:
            continue
        seen_files.add(real)
        try:
            entries = read_changelog(real)
        except (OSError, EOFError) as error:
            print(f"skipping {path}: {error}", file=sys.stderr)
            continue
        if entries and entries[0]["package"] not in by_source:
            by_source[entries[0]["package"]] = entries
    names = sorted(by_source)
    if packages:
        names = names[:packages]
    messages = []
    for name in names:
        kept, versions = [], set()
        for entry in by_source[name]:                # newest first
            if entry["package"] != name or entry["version"] in versions:
                continue
            versions.add(entry["version"])
            kept.append(entry)
            if per_package and len(kept) == per_package:
                break
        messages.extend(message(e) for e in reversed(kept))
    return messages


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", default="/usr/share/doc")
    parser.add_argument("--packages", type=int, default=0, help="the first N source packages by name (0: all)")
    parser.add_argument("--per-package", type=int, default=20, help="the newest M entries of each (0: all)")
    parser.add_argument("--sample", type=int, default=80, help="entries in the labelling sample")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    args = parser.parse_args()

    messages = collect(args.docs, args.packages, args.per_package)
    if not messages:
        sys.exit(f"no changelog entries under {args.docs}/*/changelog.Debian.gz")
    os.makedirs(args.out, exist_ok=True)
    write_jsonl(os.path.join(args.out, "changelog-messages.jsonl"), messages)

    chosen = sorted(random.Random(SEED).sample(range(len(messages)), min(args.sample, len(messages))))
    write_jsonl(os.path.join(args.out, "priority-sample.jsonl"), [dict(messages[i], priority=None) for i in chosen])
    threads = len({m["domainIdentifier"] for m in messages})
    print(f"{len(messages)} messages in {threads} threads; {len(chosen)} in the labelling sample", file=sys.stderr)


if __name__ == "__main__":
    main()
