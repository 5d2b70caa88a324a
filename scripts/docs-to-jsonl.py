#!/usr/bin/env python3
"""Turns the text documentation under a folder (by default /usr/share/doc) into JSON lines of
searchable items for `replica import`: one item per readable text file, gzip-compressed ones included.
Binary files, empty files and files over 2 MB are skipped."""
import gzip
import json
import os
import sys
from datetime import datetime, timezone

ROOT = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/doc"
LIMIT = 2 << 20
TYPES = {".md": "net.daringfireball.markdown", ".rst": "org.docutils.restructuredtext",
         ".html": "public.html", ".htm": "public.html", ".txt": "public.plain-text"}

for folder, _, names in os.walk(ROOT):
    for name in sorted(names):
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isfile(path) or os.path.getsize(path) > LIMIT:
            continue
        try:
            with (gzip.open(path, "rb") if name.endswith(".gz") else open(path, "rb")) as handle:
                data = handle.read(LIMIT + 1)
        except (OSError, EOFError):
            continue
        if not data or len(data) > LIMIT or b"\0" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="replace")
        relative = os.path.relpath(path, ROOT)
        package = relative.split(os.sep)[0]
        stem = name[:-3] if name.endswith(".gz") else name
        modified = datetime.fromtimestamp(os.path.getmtime(path), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        print(json.dumps({
            "uniqueIdentifier": "doc:" + relative,
            "domainIdentifier": "docs." + package.replace(".", "-"),
            "expirationDate": "2999-01-01T00:00:00Z",
            "attributes": {
                "title": f"{package}: {stem}",
                "textContent": text,
                "contentType": TYPES.get(os.path.splitext(stem)[1].lower(), "public.plain-text"),
                "contentModificationDate": modified,
                "path": path,
            },
        }, ensure_ascii=False))
