"""core.nlp speeds: `tagger.tag` (per sentence of 20 words) and lexicon links (per word pair).

    python -m benchmarks --ops nlp_tag,nlp_link

The text is sample_kb's prose; the pairs are its words against each other, so most have no link
(the common case of a support check). `nlp_load` times reading each data file once (wall
clock; the tagger's JSON weights dominate).
"""

from __future__ import annotations

import json

from benchmarks import measure, row
from core.infra.resources import sample_kb_dir
from core.nlp import lexicon, tagger

OPS = ("nlp_tag", "nlp_link", "nlp_load")
SENTENCE_WORDS = 20
PAIRS = 2_000


def _sentences() -> list[list[str]]:
    words = []
    for path in sorted(sample_kb_dir().rglob("*")):
        if path.is_file() and path.suffix in {".md", ".txt"}:
            words += tagger.split_words(path.read_text(encoding="utf-8"))
    return [words[i : i + SENTENCE_WORDS] for i in range(0, len(words) - SENTENCE_WORDS, SENTENCE_WORDS)]


def run(sizes: list[int] | None = None, ops: set[str] = frozenset(OPS)) -> list[dict]:
    rows = []
    if "nlp_load" in ops:
        times, peak = measure([lambda: tagger.load(), lambda: lexicon.load()])
        rows.append(row("mrptui-tagger", 1, "nlp_load", times[:1], peak))
        rows.append(row("mrptui-lexicon", 1, "nlp_load", times[1:], peak))
    sentences = _sentences()
    if "nlp_tag" in ops:
        tagger.tag(["Warm", "up"])  # loads the weights and the lexicon its WordNet check reads
        times, peak = measure([lambda s=s: tagger.tag(s) for s in sentences])
        rows.append(row("mrptui", len(sentences), "nlp_tag", times, peak))
    if "nlp_link" in ops:
        lex = lexicon.load()
        words = sorted({w.lower() for s in sentences for w in s if w.isalpha() and len(w) > 3})
        pairs = [(words[i % len(words)], words[(i * 7 + 3) % len(words)]) for i in range(PAIRS)]
        times, peak = measure([lambda a=a, b=b: lex.link(a, b) for a, b in pairs])
        rows.append(row("mrptui", len(pairs), "nlp_link", times, peak))
    return rows


if __name__ == "__main__":
    for found in run():
        print(json.dumps(found))
