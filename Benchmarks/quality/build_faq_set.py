#!/usr/bin/env python3
"""Known-item retrieval set from the Python 3.11 FAQ (Debian package python3.11-doc).

Every FAQ entry (a section whose heading is a question) gives one query, the heading, and one
document, the entry's answer: the section's text without its heading (and without the text of
nested entries, which are documents of their own). Standard library only.

  apt-get install -y python3.11-doc
  python3 build_faq_set.py [--html /usr/share/doc/python3.11/html/faq] [--out data]
writes data/faq-docs.jsonl   {"id": "programming.html#how-do-i-copy-an-object-in-python", "text": ...}
       data/faq-queries.jsonl {"id": same id, "query": heading text, "relevant": [doc id]}
"""
import argparse, glob, json, os, re
from html.parser import HTMLParser

BLOCK = {"p", "pre", "li", "dt", "dd", "div", "section", "table", "tr", "blockquote",
         "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "dl", "br"}
QUESTION_START = re.compile(r"^(how|what|why|when|where|who|which|whose|is|are|can|could|do|does|"
                            r"did|should|will|would|has|have|i |my )", re.I)


class Section:
    def __init__(self, sid, level, parent):
        self.id, self.level, self.parent = sid, level, parent
        self.heading, self.parts, self.children = "", [], []


class FAQParser(HTMLParser):
    """Builds the tree of <section id=...> elements inside Sphinx's main body."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Section(None, 0, None)
        self.stack = [self.root]     # open sections
        self.tags = []               # open tags, to know where the text goes
        self.in_body = 0             # depth inside <div role="main">, 0 = outside
        self.skip = 0                # inside a headerlink or the page's local table of contents
        self.heading = None          # the Section whose heading is being read

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("br", "img", "hr", "meta", "link", "input"):
            if tag == "br": self._text("\n")
            return
        self.tags.append(tag)
        if self.in_body:
            self.in_body += 1
        elif tag == "div" and a.get("role") == "main":
            self.in_body = 1
            return
        if not self.in_body:
            return
        cls = a.get("class") or ""
        if self.skip or "headerlink" in cls or "contents" in cls.split():
            self.skip += 1
        if tag == "section" and a.get("id"):
            s = Section(a["id"], len(self.stack), self.stack[-1])
            self.stack[-1].children.append(s); self.stack.append(s)
        elif re.fullmatch(r"h[1-6]", tag) and not self.heading and not self.stack[-1].heading:
            self.heading = self.stack[-1]
        if tag in BLOCK:
            self._text("\n")

    def handle_endtag(self, tag):
        if tag not in self.tags:
            return
        while self.tags:                          # tolerate unclosed tags
            t = self.tags.pop()
            if self.in_body:
                self.in_body -= 1
                if self.skip: self.skip -= 1
                if t == "section" and len(self.stack) > 1: self.stack.pop()
                if re.fullmatch(r"h[1-6]", t) and self.heading: self.heading = None
                if t in BLOCK: self._text("\n")
            if t == tag:
                break

    def handle_data(self, data):
        if self.in_body and not self.skip:
            self._text(data)

    def _text(self, s):
        if self.heading is not None:
            self.heading.heading += s if s != "\n" else " "
        else:
            self.stack[-1].parts.append(s)


def clean(text, keep_lines=True):
    lines = [re.sub(r"[ \t\u00a0]+", " ", l).strip() for l in text.split("\n")]
    text = "\n".join(l for l in lines if l)
    return text if keep_lines else " ".join(text.split())


def is_question(heading):
    return "?" in heading or bool(QUESTION_START.match(heading))


def entries(path):
    p = FAQParser(); p.feed(open(path, encoding="utf-8").read()); p.close()
    page = os.path.basename(path)
    out, todo = [], list(p.root.children)
    while todo:
        s = todo.pop(0)
        todo[:0] = s.children
        heading = clean(s.heading, keep_lines=False)
        if not is_question(heading):
            continue
        # the answer: this section's own text plus nested non-question sections (with headings)
        def text_of(sec):
            parts = list(sec.parts)
            for c in sec.children:
                h = clean(c.heading, keep_lines=False)
                if not is_question(h):
                    parts += ["\n", h, "\n", text_of(c)]
            return "".join(parts)
        out.append({"id": f"{page}#{s.id}", "query": heading, "text": clean(text_of(s))})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--html", default="/usr/share/doc/python3.11/html/faq")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    a = ap.parse_args()
    items = []
    for path in sorted(glob.glob(os.path.join(a.html, "*.html"))):
        if os.path.basename(path) != "index.html":
            items += entries(path)
    write_set(items, a.out, "faq", a.html)


def write_set(items, out, name, source):
    """Writes a known-item set: OUT/NAME-docs.jsonl (id, text) and OUT/NAME-queries.jsonl (id, query,
    relevant: its own id), leaving out entries without text."""
    items = [e for e in items if e["text"]]
    assert len({e["id"] for e in items}) == len(items)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, f"{name}-docs.jsonl"), "w", encoding="utf-8") as f:
        for e in items:
            f.write(json.dumps({"id": e["id"], "text": e["text"]}, ensure_ascii=False) + "\n")
    with open(os.path.join(out, f"{name}-queries.jsonl"), "w", encoding="utf-8") as f:
        for e in items:
            f.write(json.dumps({"id": e["id"], "query": e["query"], "relevant": [e["id"]]},
                               ensure_ascii=False) + "\n")
    print(f"{len(items)} documents, {len(items)} queries from {source}")


if __name__ == "__main__":
    main()
