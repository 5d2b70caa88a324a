#!/usr/bin/env python3
"""Replica's own retrieval quality on a known-item set, beside raw SQLite FTS5 BM25 in the same run.

  python3 build_faq_set.py                        # once: the FAQ set from Debian's python3.11-doc
  python3 evaluate_replica.py --replica PATH      # PATH: a built replica binary (release is faster)
  python3 build_debian_faq_set.py                 # once: the second set, from Debian's debian-faq
  python3 evaluate_replica.py --set debfaq --replica PATH

--set picks the files data/SET-docs.jsonl and data/SET-queries.jsonl: faq (the default) or debfaq.

Each document becomes an item of a fresh store (textContent only: the set indexes sections without
their question headings), embedded by `replica import` with the installed model; each query runs
through `replica search --json --limit 100` as typed: by the words (--lexical, with and without --all),
by meaning (--semantic) and both (the default). With --typos, every query is also asked with one typo
(typos.py: one word of 5+ letters, seed 45), lexical and hybrid, with and without --exact. Raw FTS5 is evaluate_baselines.bm25_run (words quoted
and OR-ed, porter). Metrics: nDCG@10, MRR@10, Recall@100 (binary relevance), averaged over queries.
"""
import argparse, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from evaluate_baselines import SETS, bm25_run, load, metrics
from typos import with_typos


def replica_store(replica, docs):
    """A fresh store holding the documents, embedded (the model must be installed)."""
    store = tempfile.mkdtemp(prefix="replica-quality-")
    run = lambda *args, **kw: subprocess.run([replica, "--store", store, *args], check=True, capture_output=True, text=True, **kw)
    run("accounts", "sign-in", "quality")
    lines = "\n".join(json.dumps({"uniqueIdentifier": d["id"], "expirationDate": "2999-01-01T00:00:00Z",
                                  "attributes": {"textContent": d["text"], "contentType": "public.plain-text"}}) for d in docs)
    run("import", "--account", "quality", "-", input=lines)
    return store


def replica_run(replica, store, queries, extra=()):
    runs = []
    for q in queries:
        out = subprocess.run([replica, "--store", store, "search", "--json", "--limit", "100", *extra, "--", *q["query"].split()],
                             capture_output=True, text=True)
        results = json.loads(out.stdout)["results"] if out.returncode == 0 else []
        runs.append([r["uniqueIdentifier"] for r in results])
    return runs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replica", required=True)
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--set", default="faq", choices=SETS,
                    help="which known-item set: faq (Python FAQ, the default) or debfaq (Debian FAQ)")
    ap.add_argument("--typos", action="store_true", help="also ask every query with one typo")
    a = ap.parse_args()
    docs = load(os.path.join(a.data, f"{a.set}-docs.jsonl"))
    queries = load(os.path.join(a.data, f"{a.set}-queries.jsonl"))
    store = replica_store(a.replica, docs)
    results = {
        "raw FTS5 BM25 (words OR-ed, porter)": metrics(bm25_run(docs, queries), queries),
        "replica lexical (--lexical)": metrics(replica_run(a.replica, store, queries, ["--lexical"]), queries),
        "replica lexical, every word (--lexical --all)": metrics(replica_run(a.replica, store, queries, ["--lexical", "--all"]), queries),
        "replica semantic only (--semantic)": metrics(replica_run(a.replica, store, queries, ["--semantic"]), queries),
        "replica hybrid (the default)": metrics(replica_run(a.replica, store, queries), queries),
    }
    if a.typos:
        typed = with_typos(queries)
        results.update({
            "raw FTS5 BM25, 1 typo": metrics(bm25_run(docs, typed), typed),
            "replica lexical, 1 typo": metrics(replica_run(a.replica, store, typed, ["--lexical"]), typed),
            "replica lexical --exact, 1 typo": metrics(replica_run(a.replica, store, typed, ["--lexical", "--exact"]), typed),
            "replica hybrid, 1 typo": metrics(replica_run(a.replica, store, typed), typed),
            "replica hybrid --exact, 1 typo": metrics(replica_run(a.replica, store, typed, ["--exact"]), typed),
        })
    print(f"{a.set}: {len(docs)} documents, {len(queries)} queries")
    print(f"| {'run':38s} | nDCG@10 | MRR@10 | Recall@100 |\n|{'-' * 40}|---------|--------|------------|")
    for name, m in results.items():
        print(f"| {name:38s} | {m['nDCG@10']:.3f}   | {m['MRR@10']:.3f}  | {m['Recall@100']:.3f}      |")


if __name__ == "__main__":
    main()
