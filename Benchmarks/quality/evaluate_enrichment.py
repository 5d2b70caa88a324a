#!/usr/bin/env python3
"""Scores priority and summary predictions on the changelog messages against hand labels and baselines.

Inputs:
  --labels       priority-labels.json: {"<uniqueIdentifier>": true | false, ...}, written by hand
                 against PRIORITY-RUBRIC.md (never from a classifier's output)
  --predictions  JSON lines, one per message: {"uniqueIdentifier": ..., "isPriority": true | false | null,
                 "summary": "..." | null}; produced by the system under test (for replica: its built-in
                 RuleBasedPriorityClassifier and ExtractiveSummarizer, run on the threads of
                 data/changelog-messages.jsonl; a key may be missing or null when not predicted)
  --messages     data/changelog-messages.jsonl from build_enrichment_set.py: the entries' texts

Priority, on the labelled messages that have an isPriority prediction: precision, recall, F1 and
accuracy of the predictions, beside the trivial baselines "always no" (its precision is undefined and
shown as a dash) and "always yes".

Summaries: there are no reference summaries, so a proxy stands in. Centroid coverage: take the entry's
content words (lowercased runs of letters and digits, two characters or more, minus a short English
stop-word list) with their counts in the entry; a summary scores the share of that total count carried
by the words it contains. 1.0 means the summary holds every content word of the entry; copying the
entry would score 1.0, so read it beside the length. The baseline is the lead: the entry's first 300
characters, cut after the last sentence end (. ! ? or a line end) within them, or at a word boundary
when there is none. Every message with a summary prediction is scored.

Run (Python 3.11, standard library only):

    python3 build_enrichment_set.py
    python3 evaluate_enrichment.py --predictions predictions.jsonl \\
        [--labels priority-labels.json] [--messages data/changelog-messages.jsonl] [--json results.json]

It prints two Markdown tables.
"""
import argparse, json, os, re, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
LEAD_CHARACTERS = 300
WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
STOP_WORDS = set("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each even few for from further get got had has
have having he her here hers herself him himself his how i if in into is it its itself just let like may
me might more most much must my myself no nor not now of off on once one only or other our ours ourselves
out over own same shall she should so some such than that the their theirs them themselves then there these
they this those through to too under until up us very was we were what when where which while who whom why
will with would yet you your yours yourself yourselves
""".split())


def load_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def content_words(text):
    words = (w.lower().replace("’", "'") for w in WORD.findall(text))
    return [w for w in words if len(w) >= 2 and w not in STOP_WORDS]


def coverage(summary, text):
    """Share of the entry's content-word occurrences whose word the summary contains."""
    counts = Counter(content_words(text))
    total = sum(counts.values())
    if not total:
        return None
    present = set(content_words(summary))
    return sum(n for w, n in counts.items() if w in present) / total


def lead(text, limit=LEAD_CHARACTERS):
    """The first `limit` characters, cut after the last sentence end within them."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)|\n", head)]
    if text[limit:limit + 1].isspace() and head[-1:] in ".!?":
        ends.append(limit)
    if ends:
        return head[:max(ends)].strip()
    cut = head.rsplit(None, 1)[0] if " " in head.strip() else head
    return cut.strip()


def binary_scores(pairs):
    """Precision, recall, F1, accuracy of (predicted, actual) pairs; precision None when nothing is predicted."""
    tp = sum(1 for p, a in pairs if p and a)
    fp = sum(1 for p, a in pairs if p and not a)
    fn = sum(1 for p, a in pairs if not p and a)
    tn = sum(1 for p, a in pairs if not p and not a)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None
    accuracy = (tp + tn) / len(pairs) if pairs else None
    return {"precision": precision, "recall": recall, "f1": f1, "accuracy": accuracy,
            "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def number(value):
    return "—" if value is None else f"{value:.3f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--predictions", required=True)
    parser.add_argument("--labels", default=os.path.join(HERE, "priority-labels.json"))
    parser.add_argument("--messages", default=os.path.join(HERE, "data", "changelog-messages.jsonl"))
    parser.add_argument("--json", help="also write the numbers to this file")
    args = parser.parse_args()

    with open(args.labels, encoding="utf-8") as f:
        labels = json.load(f)
    predictions = {p["uniqueIdentifier"]: p for p in load_jsonl(args.predictions)}
    texts = {m["uniqueIdentifier"]: m["attributes"].get("textContent") or "" for m in load_jsonl(args.messages)}
    results = {}

    # Priority
    pairs = [(bool(predictions[i]["isPriority"]), bool(label)) for i, label in sorted(labels.items())
             if i in predictions and predictions[i].get("isPriority") is not None]
    missing = len(labels) - len(pairs)
    if missing:
        print(f"{missing} of {len(labels)} labelled messages have no priority prediction; they are left out",
              file=sys.stderr)
    positives = sum(1 for _, a in pairs if a)
    results["priority"] = {
        "labelled": len(labels), "evaluated": len(pairs), "positives": positives,
        "classifier": binary_scores(pairs),
        "always no": binary_scores([(False, a) for _, a in pairs]),
        "always yes": binary_scores([(True, a) for _, a in pairs]),
    }
    print(f"Priority: {len(pairs)} labelled messages, {positives} priority\n")
    print("| system | precision | recall | F1 | accuracy |")
    print("| --- | --- | --- | --- | --- |")
    for name in ("classifier", "always no", "always yes"):
        s = results["priority"][name]
        print(f"| {name} | {number(s['precision'])} | {number(s['recall'])} | {number(s['f1'])} | {number(s['accuracy'])} |")

    # Summaries
    # The lead at the summary's own length too: a longer text covers more, whatever it is.
    scored = {"summarizer": [], "lead-300": [], "lead, same length": []}
    lengths = {"summarizer": [], "lead-300": [], "lead, same length": []}
    for identifier, prediction in sorted(predictions.items()):
        summary, text = prediction.get("summary"), texts.get(identifier)
        if summary is None or text is None:
            continue
        for name, candidate in (("summarizer", summary), ("lead-300", lead(text)), ("lead, same length", text[:len(summary)])):
            value = coverage(candidate, text)
            if value is not None:
                scored[name].append(value)
                lengths[name].append(len(candidate))
    results["summaries"] = {name: {"messages": len(scored[name]),
                                   "coverage": sum(scored[name]) / len(scored[name]) if scored[name] else None,
                                   "mean_characters": sum(lengths[name]) / len(lengths[name]) if lengths[name] else None}
                            for name in scored}
    print(f"\nSummaries: {len(scored['summarizer'])} messages (centroid coverage, a proxy: no reference summaries)\n")
    print("| system | centroid coverage | mean length (characters) |")
    print("| --- | --- | --- |")
    for name, s in results["summaries"].items():
        length = "—" if s["mean_characters"] is None else f"{s['mean_characters']:.1f}"
        print(f"| {name} | {number(s['coverage'])} | {length} |")

    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
