#!/usr/bin/env python3
"""The store `replica-bench hybrid` times search on: 100,000 items from 1,000 paragraphs, with vectors.

  python3 Benchmarks/quality/make_latency_store.py --replica .build/release/replica --store /tmp/s100k

The paragraphs are bench_embed.py's (1,000 <p> paragraphs of Debian's python3.11-doc library
reference). Item i is paragraph i % 1000 with its words shuffled (seeded), the first six as its title.
The 1,000 paragraphs are embedded for real by replica in a side store; each item then gets its
paragraph's vector, written straight into the index (embedding 100,000 items takes about an hour on two
cores, and a scan costs the same whatever the vectors hold). For timing only: these vectors do not
match the shuffled text, so the store is no use for judging ranking.
"""
import argparse, json, os, random, sqlite3, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_embed import paragraphs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replica", required=True)
    ap.add_argument("--store", required=True)
    ap.add_argument("--items", type=int, default=100_000)
    a = ap.parse_args()
    texts = paragraphs(1000)
    scratch = tempfile.mkdtemp(prefix="replica-latency-")
    side = os.path.join(scratch, "side")

    def replica(store, *args, stdin=None):
        subprocess.run([a.replica, "--store", store, *args], input=stdin, text=True, check=True, capture_output=True)

    lines = "\n".join(json.dumps({"uniqueIdentifier": f"p{i}", "expirationDate": "2999-01-01T00:00:00Z",
                                  "attributes": {"textContent": t}}) for i, t in enumerate(texts))
    replica(side, "accounts", "sign-in", "a")
    replica(side, "import", "--account", "a", "-", stdin=lines)           # embeds them
    random.seed(7)
    items = []
    for i in range(a.items):
        words = texts[i % 1000].split()
        random.shuffle(words)
        items.append(json.dumps({"uniqueIdentifier": f"p{i}", "expirationDate": "2999-01-01T00:00:00Z",
                                 "attributes": {"title": " ".join(words[:6]), "textContent": " ".join(words)}}))
    replica(a.store, "accounts", "sign-in", "a")
    replica(a.store, "import", "--account", "a", "--no-embed", "-", stdin="\n".join(items))

    source = sqlite3.connect(os.path.join(side, "accounts/a/indexes/default.sqlite"))
    model = source.execute("SELECT model FROM embedded LIMIT 1").fetchone()[0]
    vectors = {}
    for identifier, passage, blob in source.execute(
            "SELECT items.identifier, vectors.passage, vectors.vector FROM vectors JOIN items ON items.id = vectors.item ORDER BY 1, 2"):
        vectors.setdefault(int(identifier[1:]), []).append(blob)
    target = sqlite3.connect(os.path.join(a.store, "accounts/a/indexes/default.sqlite"))
    rows = target.execute("SELECT id, identifier, indexed FROM items").fetchall()
    target.executemany("INSERT INTO vectors(item, passage, vector) VALUES (?, ?, ?)",
                       [(rowid, n, blob) for rowid, ident, _ in rows for n, blob in enumerate(vectors[int(ident[1:]) % 1000])])
    target.executemany("INSERT INTO embedded(item, model, indexed) VALUES (?, ?, ?)", [(rowid, model, indexed) for rowid, _, indexed in rows])
    target.execute("INSERT INTO meta(key, value) VALUES ('vectors_version', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")
    target.commit()
    print(f"{a.store}: {len(rows)} items with vectors of {model}")


if __name__ == "__main__":
    main()
