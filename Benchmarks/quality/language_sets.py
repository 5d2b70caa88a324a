#!/usr/bin/env python3
"""The multilingual question sets (XQuAD-R, JSQuAD) as items and questions, for evaluate_languages.py,
and written out as JSON lines for `replica-bench quality`, which searches them in-process:

  python3 language_sets.py --sets /work/shared/data/multilingual --out /tmp/sets [--across es:zh,zh:es]
  Benchmarks/.build/release/replica-bench quality --documents /tmp/sets/zh-docs.jsonl \
      --queries /tmp/sets/zh-queries.jsonl --model multilingual-e5-small

Writes LANG-docs.jsonl ({"id", "title", "text"}) and LANG-queries.jsonl ({"id", "query", "relevant"})
for each set, and for each --across pair ASKING:HOLDING the file ASKING-over-HOLDING-queries.jsonl:
ASKING's questions with the relevant sentence of HOLDING's (search them over HOLDING-docs.jsonl).
The sets are CC BY-SA 4.0: XQuAD-R from LAReQA (Roy et al. 2020), JSQuAD v1.3 from JGLUE (Kurihara et
al. 2022); see evaluate_languages.py for how each is read.
"""
import argparse, json, os

LANGUAGES = ("ar", "el", "es", "hi", "tr", "vi", "zh", "ja")   # ja: JSQuAD; the rest: XQuAD-R


# The sets: items {"id", "title", "text"}, questions {"id", "query", "relevant": [item id]}.

def load_xquadr(path):
    items, questions = [], []
    for a, article in enumerate(json.load(open(path, encoding="utf-8"))["data"]):
        for p, para in enumerate(article["paragraphs"]):
            ids = [f"a{a}p{p}s{s}" for s in range(len(para["sentences"]))]
            items += [{"id": i, "title": "", "text": s} for i, s in zip(ids, para["sentences"])]
            for q in para["qas"]:
                start = q["answers"][0]["answer_start"]
                hit = next(i for i, (b, e) in zip(ids, para["sentence_breaks"]) if b <= start < e)
                questions.append({"id": q["id"], "query": q["question"], "relevant": [hit]})
    return items, questions


def load_jsquad(path):
    items, questions, by_context = [], [], {}
    for article in json.load(open(path, encoding="utf-8"))["data"]:
        for para in article["paragraphs"]:
            if para["context"] not in by_context:
                title, text = para["context"].split(" [SEP] ", 1)
                by_context[para["context"]] = f"c{len(items)}"
                items.append({"id": by_context[para["context"]], "title": title, "text": text})
            questions += [{"id": q["id"], "query": q["question"], "relevant": [by_context[para["context"]]]}
                          for q in para["qas"]]
    return items, questions


def load_set(sets_dir, lang):
    if lang == "ja":
        return load_jsquad(os.path.join(sets_dir, "jsquad-test.json"))
    return load_xquadr(os.path.join(sets_dir, f"xquadr-{lang}.json"))


def across(sets_dir, asking, holding):
    """ASKING's questions over HOLDING's sentences: each with the relevant sentence of HOLDING's own
    question of the same id (the sets' questions share their ids)."""
    _, own = load_set(sets_dir, holding)
    relevant = {q["id"]: q["relevant"] for q in own}
    _, theirs = load_set(sets_dir, asking)
    return [{**q, "relevant": relevant[q["id"]]} for q in theirs if q["id"] in relevant]


def write_lines(path, rows):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", required=True, help="the folder with xquadr-*.json and jsquad-test.json")
    ap.add_argument("--out", required=True)
    ap.add_argument("--across", default="", help="pairs ASKING:HOLDING, comma-separated (es:zh,zh:es)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    for lang in LANGUAGES:
        items, questions = load_set(a.sets, lang)
        write_lines(os.path.join(a.out, f"{lang}-docs.jsonl"), items)
        write_lines(os.path.join(a.out, f"{lang}-queries.jsonl"), questions)
    for pair in filter(None, a.across.split(",")):
        asking, holding = pair.split(":")
        write_lines(os.path.join(a.out, f"{asking}-over-{holding}-queries.jsonl"), across(a.sets, asking, holding))


if __name__ == "__main__":
    main()
