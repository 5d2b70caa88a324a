#!/usr/bin/env python3
"""Known-item retrieval set from the Debian GNU/Linux FAQ (Debian package debian-faq).

A second set beside build_faq_set.py (the Python FAQ), built the same way: every FAQ entry (a
section whose heading is a question, by the same rule) gives one query, the heading without its
number ("3.1. "), and one document, the entry's answer: the section's text without its heading and
without the text of nested entries, which are documents of their own. Nested sections that are not
questions ("8.1.1. dpkg") stay in their parent's answer, with their headings. DocBook puts footnotes
at the end of the chapter; a footnote's text is added to the end of the section that refers to it.
A cross-reference keeps only its label: the stylesheet writes the target's heading into the link
("see Section 7.6, “What is a Debian preinst, postinst, prerm, and postrm script?”"), which would put
a query word for word into another entry's answer 30 times; the author wrote only the link. With
--xref-titles they are kept. Standard library only.

  apt-get install -y debian-faq
  python3 build_debian_faq_set.py [--html /usr/share/doc/debian/FAQ] [--out data]
writes data/debfaq-docs.jsonl    {"id": "pkg-basics.en.html#package", "text": ...}
       data/debfaq-queries.jsonl {"id": same id, "query": heading text, "relevant": [doc id]}
"""
import argparse, glob, json, os, re, sys
from html.parser import HTMLParser

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from build_faq_set import BLOCK, clean, write_set   # the same text cleaning and output

BLOCK = BLOCK | {"td", "th"}
NUMBER = re.compile(r"^\d+(\.\d+)*\.?\s+")                  # "3.1.12. " before a heading
# build_faq_set's question rule, with the question word ending at a word boundary, so that
# "Document format" does not count as starting with "do" (this gives the Python set unchanged)
QUESTION_START = re.compile(r"^(how|what|why|when|where|who|which|whose|is|are|can|could|do|does|"
                            r"did|should|will|would|has|have|i|my)(\b|n't)", re.I)
XREF_LABEL = re.compile(r"^\s*((Section|Chapter|Appendix)\s+\d+(\.\d+)*)")


def is_question(heading):
    return "?" in heading or bool(QUESTION_START.match(heading))


class Section:
    def __init__(self, parent):
        self.id, self.parent = None, parent
        self.heading, self.parts, self.children, self.footnotes = "", [], [], []


class DocBookParser(HTMLParser):
    """Builds the tree of <div class="section"> elements of one DocBook XSL chapter page."""

    def __init__(self, xref_titles=False):
        super().__init__(convert_charrefs=True)
        self.xref_titles = xref_titles
        self.xref = None             # text of the cross-reference being read
        self.root = Section(None)
        self.stack = [self.root]     # open sections
        self.tags = []               # open tags, each with what closing it ends
        self.skip = 0                # inside navigation, a table of contents or a footnote mark
        self.heading = None          # the Section whose heading is being read
        self.footnote = None         # id of the footnote whose text is being read
        self.notes = {}              # footnote id -> text

    def handle_startendtag(self, tag, attrs):      # XHTML <br />, <hr />, <img ... />
        if tag == "br":
            self._text("\n")

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("br", "img", "hr", "meta", "link", "input"):
            if tag == "br": self._text("\n")
            return
        cls = (a.get("class") or "").split()
        ends = []
        if self.skip or any(c in cls for c in ("navheader", "navfooter", "toc")) \
                or (tag == "a" and "footnote" in cls) or (tag == "a" and "para" in cls):
            if tag == "a" and "footnote" in cls and not self.skip:      # a mark: [2]
                self.stack[-1].footnotes.append(a.get("href", "").lstrip("#"))
            self.skip += 1; ends.append("skip")
        if tag == "div" and "section" in cls:
            s = Section(self.stack[-1])
            self.stack[-1].children.append(s); self.stack.append(s); ends.append("section")
        elif tag == "div" and "footnote" in cls and a.get("id"):
            self.footnote = a["id"]; self.notes[self.footnote] = ""; ends.append("footnote")
        elif re.fullmatch(r"h[2-6]", tag) and "title" in cls and self.heading is None \
                and not self.stack[-1].heading and self.stack[-1] is not self.root:
            self.heading = self.stack[-1]; ends.append("heading")
        elif tag == "a" and "xref" in cls and not self.xref_titles and self.xref is None:
            self.xref = ""; ends.append("xref")
        elif tag == "a" and a.get("id") and self.heading is not None and self.heading.id is None:
            self.heading.id = a["id"]
        self.tags.append((tag, ends))
        if tag in BLOCK:
            self._text("\n")

    def handle_endtag(self, tag):
        if not any(t == tag for t, _ in self.tags):
            return
        while self.tags:                          # tolerate unclosed tags
            t, ends = self.tags.pop()
            if "skip" in ends: self.skip -= 1
            if "section" in ends: self.stack.pop()
            if "footnote" in ends: self.footnote = None
            if "heading" in ends: self.heading = None
            if "xref" in ends:             # "Section 7.6, “What is …?”" -> "Section 7.6"
                text, self.xref = self.xref, None
                m = XREF_LABEL.match(text)
                self._text(m.group(1) if m else text)
            if t in BLOCK: self._text("\n")
            if t == tag:
                break

    def handle_data(self, data):
        if not self.skip:
            self._text(data)

    def _text(self, s):
        if self.xref is not None:
            self.xref += s
        elif self.heading is not None:
            self.heading.heading += s if s != "\n" else " "
        elif self.footnote is not None:
            self.notes[self.footnote] += s
        else:
            self.stack[-1].parts.append(s)


def entries(path, xref_titles=False):
    p = DocBookParser(xref_titles); p.feed(open(path, encoding="utf-8").read()); p.close()
    page = os.path.basename(path)
    heading = lambda sec: NUMBER.sub("", clean(sec.heading, keep_lines=False))

    def text_of(sec):
        # this section's own text, its footnotes, then nested non-question sections (with headings)
        parts = list(sec.parts) + ["\n" + p.notes[f] + "\n" for f in sec.footnotes if f in p.notes]
        for c in sec.children:
            h = heading(c)
            if not is_question(h):
                parts += ["\n", h, "\n", text_of(c)]
        return "".join(parts)

    out, todo = [], list(p.root.children)
    while todo:
        s = todo.pop(0)
        todo[:0] = s.children
        h = heading(s)
        if is_question(h):
            assert s.id, f"{page}: no anchor for {h!r}"
            out.append({"id": f"{page}#{s.id}", "query": h, "text": clean(text_of(s))})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--html", default="/usr/share/doc/debian/FAQ")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
    ap.add_argument("--xref-titles", action="store_true",
                    help="keep the titles the stylesheet writes into cross-references")
    a = ap.parse_args()
    items = []
    for path in sorted(glob.glob(os.path.join(a.html, "*.en.html"))):   # *.html are symlinks to these
        if os.path.basename(path) != "index.en.html":
            items += entries(path, a.xref_titles)
    if not items:
        sys.exit(f"no FAQ entries under {a.html}: apt-get install -y debian-faq")
    write_set(items, a.out, "debfaq", a.html)


if __name__ == "__main__":
    main()
