"""One typo per question, for the quality scripts (issue 45): in one word of 5 or more letters (Han, kana,
Hangul and Thai excluded), chosen at random with a fixed seed, a delete, insert, substitution or swap of
neighbours, never of the first letter."""
import random, unicodedata

NOT_TYPED = ("CJK", "IDEOGRAPH", "HIRAGANA", "KATAKANA", "HANGUL", "THAI")   # in a character's name


def typo_words(text):
    """(start, end) of each run of 5 or more letters and marks (Han, kana, Hangul and Thai excluded)."""
    spans, start = [], None
    for i, c in enumerate(text + " "):
        inside = unicodedata.category(c)[0] in "LM" and not any(s in unicodedata.name(c, "") for s in NOT_TYPED)
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            if i - start >= 5:
                spans.append((start, i))
            start = None
    return spans


def one_edit(word, rng):
    """The word with one delete, insert, substitution or swap of neighbours, its first character kept."""
    letters = sorted({c for c in word if unicodedata.category(c)[0] == "L"})
    n = len(word)
    edits = {
        "delete": [word[:i] + word[i + 1:] for i in range(1, n)],
        "insert": [word[:i] + c + word[i:] for i in range(1, n + 1) for c in letters],
        "substitute": [word[:i] + c + word[i + 1:] for i in range(1, n) for c in letters if c != word[i]],
        "swap": [word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(1, n - 1) if word[i] != word[i + 1]],
    }
    return rng.choice(edits[rng.choice([kind for kind, words in edits.items() if words])])


def with_typos(questions, seed=45):
    rng, out = random.Random(seed), []
    for q in questions:
        spans = typo_words(q["query"])
        if spans:
            s, e = rng.choice(spans)
            q = {**q, "query": q["query"][:s] + one_edit(q["query"][s:e], rng) + q["query"][e:]}
        out.append(q)
    return out
