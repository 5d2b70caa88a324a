#!/usr/bin/env python3
"""Lexical retrieval quality in eight languages: today's FTS5 tokenizer, a plain ICU + Snowball BM25
and (with --replica) replica itself, on public question sets, optionally with one typo per question.

  python3 -m venv /tmp/langvenv && /tmp/langvenv/bin/pip install PyICU snowballstemmer numpy
  /tmp/langvenv/bin/python evaluate_languages.py --sets /work/shared/data/multilingual [--typos]
  /tmp/langvenv/bin/python evaluate_languages.py --sets DIR --replica PATH --only zh,es --lexical-only

PyICU builds from source: it needs libicu-dev and pkg-config (apt-get install -y libicu-dev pkg-config).

The sets (read from --sets, not copied into this repository), both CC BY-SA 4.0:
- XQuAD-R (from LAReQA, Roy et al. 2020, github.com/google-research-datasets/lareqa, xquad-r/;
  built on XQuAD, Artetxe et al. 2020): xquadr-{ar,el,es,hi,tr,vi,zh}.json, sentence retrieval. Every
  sentence of every paragraph is an item; a question's one relevant item is the sentence whose
  sentence_breaks range holds its answer's answer_start. 1,190 questions in each language.
- JSQuAD v1.3 (JGLUE, Kurihara et al. 2022, github.com/yahoojapan/JGLUE): jsquad-test.json, set
  "ja", paragraph retrieval. Every distinct context is an item, its title the text before " [SEP] ";
  a question's relevant item is its own paragraph: 1,159 paragraphs, 4,420 questions.

Systems, each over the same items and questions:
- FTS5: today's tokenizer, evaluate_baselines.bm25_run: fts5(tokenize='porter unicode61
  remove_diacritics 2'), the question's alphanumeric runs quoted and OR-ed, ORDER BY bm25. Both
  split a Devanagari word at its vowel signs (combining marks), and keep a run of Han or kana whole.
- ICU+Snowball BM25: words by ICU's word BreakIterator for the set's locale (tokens with a letter or
  digit, casefolded), stemmed by snowballstemmer where it has the language (ar, el, es, hi, tr; not
  vi, zh, ja); Okapi BM25, k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5)), each
  distinct query term once. Independent of replica's own analyzer.
- replica --lexical and (unless --lexical-only) replica --semantic (by meaning alone) and replica's
  default, hybrid search, with the embedding model --model names (REPLICA_MODEL): one fresh store per
  set in /tmp (deleted afterwards), imported from JSON lines (the JSQuAD title as the item's title,
  the rest as textContent; --lexical-only imports with --no-embed), each question run as
  `replica search --json --limit 100 [--lexical] -- WORDS` with the question split at spaces.
  --pass-language adds `--language CODE` to the search.
Baselines index a JSQuAD item as its title and text together.

--typos also asks every question with one typo: in one word of 5 or more letters, chosen at random
(a word is a run of letters and marks, so a Devanagari vowel sign counts as a letter; Han, kana,
Hangul and Thai are not words here), one edit that never touches the first character: delete one,
insert or substitute a letter taken from the word, or swap two different neighbours.
random.Random(45), fresh for each set. A question without such a word is kept as it is (the
questions column says how many changed).

--across es:zh,zh:es asks one XQuAD-R language's questions over another's sentences instead (the sets'
questions share their ids; the relevant sentence is the one holding the answer in the other language),
beside that language's own questions, by meaning alone and hybrid.

Metrics: nDCG@10 and MRR@10 (evaluate_baselines.metrics, one relevant item), averaged over questions.
"""
import argparse, json, os, random, shutil, subprocess, sys, tempfile, time, unicodedata
from collections import Counter, defaultdict
from functools import lru_cache
from math import log

import icu
import snowballstemmer

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from evaluate_baselines import bm25_run, metrics
from language_sets import LANGUAGES, load_set
from language_sets import across as questions_across
from typos import with_typos

STEMMERS = {"ar": "arabic", "el": "greek", "es": "spanish", "hi": "hindi", "tr": "turkish"}
K1, B = 1.2, 0.75


# The sets and their loaders: language_sets.py.


def whole(item):
    """An item's text as the baselines index it: its title (if any) and its text."""
    return f"{item['title']}\n{item['text']}" if item["title"] else item["text"]


# Baseline (b): ICU word segmentation, Snowball stems, plain BM25.

def analyzer(lang):
    """text → terms: ICU words of the locale with a letter or digit, casefolded, stemmed if Snowball can."""
    breaker = icu.BreakIterator.createWordInstance(icu.Locale(lang))
    stemmer = snowballstemmer.stemmer(STEMMERS[lang]) if lang in STEMMERS else None
    stem = lru_cache(maxsize=None)(stemmer.stemWord if stemmer else lambda w: w)

    def terms(text):
        breaker.setText(text)
        utf16 = text.encode("utf-16-le")   # ICU's boundaries count UTF-16 units
        bounds = [0, *breaker]
        words = (utf16[2 * s:2 * e].decode("utf-16-le") for s, e in zip(bounds, bounds[1:]))
        return [stem(w.casefold()) for w in words if any(c.isalnum() for c in w)]
    return terms


def icu_bm25_run(lang, items, questions, k=100):
    terms = analyzer(lang)
    postings, lengths = defaultdict(list), []
    for d, item in enumerate(items):
        counts = Counter(terms(whole(item)))
        lengths.append(sum(counts.values()))
        for t, tf in counts.items():
            postings[t].append((d, tf))
    n, avg = len(items), sum(lengths) / len(items)
    runs = []
    for q in questions:
        score = defaultdict(float)
        for t in set(terms(q["query"])):
            idf = log(1 + (n - len(postings[t]) + 0.5) / (len(postings[t]) + 0.5))
            for d, tf in postings[t]:
                score[d] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * lengths[d] / avg))
        best = sorted(score, key=lambda d: (-score[d], d))[:k]
        runs.append([items[d]["id"] for d in best])
    return runs


# Replica.

def replica_env(model=None):
    """The environment replica runs in: REPLICA_MODEL set to `model` when one is named."""
    return {**os.environ, **({"REPLICA_MODEL": model} if model else {})}


def replica_store(replica, items, embed, model=None):
    """A fresh store holding the items; returns it and the seconds `replica import` took."""
    store = tempfile.mkdtemp(prefix="replica-languages-")
    run = lambda *args, **kw: subprocess.run([replica, "--store", store, *args], check=True, capture_output=True, text=True,
                                             env=replica_env(model), **kw)
    run("accounts", "sign-in", "quality")
    lines = "\n".join(json.dumps({"uniqueIdentifier": it["id"], "expirationDate": "2999-01-01T00:00:00Z",
                                  "attributes": {**({"title": it["title"]} if it["title"] else {}),
                                                 "textContent": it["text"], "contentType": "public.plain-text"}})
                      for it in items)
    started = time.perf_counter()
    run("import", "--account", "quality", *([] if embed else ["--no-embed"]), "-", input=lines)
    return store, time.perf_counter() - started


def replica_run(replica, store, questions, extra=(), model=None):
    """Each question's results; a question replica refuses (exit 1: no word to search) finds nothing."""
    runs = []
    for q in questions:
        out = subprocess.run([replica, "--store", store, "search", "--json", "--limit", "100", *extra, "--", *q["query"].split()],
                             capture_output=True, text=True, env=replica_env(model))
        if out.returncode == 2:
            sys.exit(f"replica refused the command line: {out.stderr.strip()}")
        runs.append([r["uniqueIdentifier"] for r in json.loads(out.stdout)["results"]] if out.returncode == 0 else [])
    return runs


# The runs.

def evaluate(lang, a):
    """{system: metrics} for one set (clean questions, and with --typos the typo questions), and timings."""
    items, questions = load_set(a.sets, lang)
    asked = {"": questions}
    if a.typos:
        asked[", 1 typo"] = with_typos(questions)
    systems = {"FTS5 porter unicode61": lambda qs: bm25_run([{"id": it["id"], "text": whole(it)} for it in items], qs),
               "ICU+Snowball BM25": lambda qs: icu_bm25_run(lang, items, qs)}
    store, timing = None, {}
    if a.replica:
        store, timing["replica import"] = replica_store(a.replica, items, embed=not a.lexical_only, model=a.model)
        language = ["--language", lang] if a.pass_language else []
        named = f" [{a.model}]" if a.model else ""
        systems["replica --lexical"] = lambda qs: replica_run(a.replica, store, qs, ["--lexical", *language])
        if a.exact:
            systems["replica --lexical --exact"] = lambda qs: replica_run(a.replica, store, qs, ["--lexical", "--exact", *language])
        if not a.lexical_only:
            systems["replica --semantic" + named] = lambda qs: replica_run(a.replica, store, qs, ["--semantic", *language], a.model)
            systems["replica (hybrid)" + named] = lambda qs: replica_run(a.replica, store, qs, language, a.model)
    results = {}
    try:
        for suffix, qs in asked.items():
            for name, run in systems.items():
                started = time.perf_counter()
                results[name + suffix] = metrics(run(qs), qs)
                timing[name + suffix] = time.perf_counter() - started
    finally:
        if store:
            shutil.rmtree(store, ignore_errors=True)
    changed = sum(t["query"] != q["query"] for t, q in zip(asked.get(", 1 typo", []), questions))
    return {"items": len(items), "questions": len(questions), "typo questions": changed,
            "results": results, "seconds": timing}


def across(pair, a):
    """Questions of one XQuAD-R language over the sentences of another (`es:zh`: Spanish questions over
    Chinese sentences), beside the other language's own questions: semantic alone and hybrid. A
    question's relevant sentence is the one that holds its answer in the other language's paragraph
    (the sets' questions share their ids)."""
    asking, holding = pair.split(":")
    items, own = load_set(a.sets, holding)
    foreign = questions_across(a.sets, asking, holding)
    store, seconds = replica_store(a.replica, items, embed=True, model=a.model)
    results = {}
    try:
        for mode, extra in (("semantic", ["--semantic"]), ("hybrid", [])):
            results[f"{holding} questions, {mode}"] = metrics(replica_run(a.replica, store, own, extra, a.model), own)
            results[f"{asking} questions, {mode}"] = metrics(replica_run(a.replica, store, foreign, extra, a.model), foreign)
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return {"items": len(items), "questions": len(foreign), "typo questions": 0, "results": results,
            "seconds": {"replica import": seconds}}


def print_table(lang, r):
    print(f"\n{lang}: {r['items']} items, {r['questions']} questions"
          + "".join(f"; {name} {s:.1f} s" for name, s in r["seconds"].items()))
    print("| set | system | nDCG@10 | MRR@10 | questions |\n| --- | --- | --- | --- | --- |")
    for name, m in r["results"].items():
        asked = f"{r['questions']} ({r['typo questions']} with a typo)" if name.endswith("typo") else r["questions"]
        print(f"| {lang} | {name} | {m['nDCG@10']:.3f} | {m['MRR@10']:.3f} | {asked} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", required=True, help="the folder of xquadr-*.json and jsquad-test.json")
    ap.add_argument("--replica", help="a replica binary; without it only the baselines run")
    ap.add_argument("--only", help="comma-separated sets among " + ",".join(LANGUAGES) + " (ja: JSQuAD)")
    ap.add_argument("--lexical-only", action="store_true", help="skip replica's default (hybrid) search, and embedding")
    ap.add_argument("--pass-language", action="store_true", help="pass --language CODE to replica search")
    ap.add_argument("--typos", action="store_true", help="also ask every question with one typo")
    ap.add_argument("--exact", action="store_true", help="also run replica with --exact (no typo forgiven)")
    ap.add_argument("--json", help="also write the numbers here")
    ap.add_argument("--model", help="the embedding model replica runs (REPLICA_MODEL): all-MiniLM-L6-v2 or multilingual-e5-small")
    ap.add_argument("--across", help="comma-separated pairs ASKING:HOLDING of XQuAD-R languages (es:zh: Spanish questions over "
                                     "Chinese sentences), by meaning and hybrid, instead of the sets")
    a = ap.parse_args()
    if a.across:
        report = {}
        for pair in a.across.split(","):
            report[pair] = across(pair, a)
            print_table(pair, report[pair])
        if a.json:
            with open(a.json, "w") as f:
                json.dump(report, f, indent=1)
        return
    langs = a.only.split(",") if a.only else list(LANGUAGES)
    if unknown := set(langs) - set(LANGUAGES):
        ap.error(f"unknown sets: {', '.join(sorted(unknown))}")
    report = {}
    for lang in langs:
        report[lang] = evaluate(lang, a)
        print_table(lang, report[lang])
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
