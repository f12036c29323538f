"""The things a question names, as the evidence must say them: content words with their stems and
inflections, and capitalised names whose any word counts."""

from __future__ import annotations

from dataclasses import dataclass

from core.question.intent_cues import QuestionCues
from core.text.tokenizer import tokenize

EDGE = ".,;:!?()[]{}\"'`\u2018\u2019\u201c\u201d"


@dataclass(frozen=True)
class Term:
    """One thing the question names: a content word, or a capitalised name whose any word counts
    (a story calls "Ines Harrow" "Ines" after introducing her)."""

    word: str
    stems: tuple[str, ...]
    is_name: bool
    # Stems of the word's regular inflections: the Porter stemmer gives "overheat" and
    # "overheated" different stems ("overheat", "overh"), so a plain word also matches these.
    forms: frozenset[str] = frozenset()

    def found_in(self, seen: set[str]) -> bool:
        if self.is_name:
            return any(stem in seen for stem in self.stems)
        return (
            self.stems[0] in seen
            or bool(self.forms & seen)
            or (len(self.stems) > 1 and all(s in seen for s in self.stems[1:]))
        )


# The shortest base an inflection ending may be stripped to.
_MIN_BASE = 3


def inflected_stems(word: str) -> frozenset[str]:
    """Stems of the word's regular inflections (-s, -ed, -ing, with a final e or a doubled
    consonant) and of the base they come from ("deferred" → defer, defers, deferring)."""
    bases = {word}
    for ending in ("ing", "ed", "es", "s"):
        base = word[: -len(ending)]
        if word.endswith(ending) and len(base) >= _MIN_BASE and not word.endswith("ss"):
            bases |= {base, base + "e"}
            if len(base) > _MIN_BASE and base[-1] == base[-2]:
                bases.add(base[:-1])
    variants = set(bases)
    for base in bases:
        stem_of = base[:-1] if base.endswith("e") and not base.endswith("ee") else base
        variants |= {base + "s", stem_of + "ed", stem_of + "ing"}
    return frozenset(stem for variant in variants for stem in tokenize(variant))


def question_terms(question: str, cues: QuestionCues) -> list[Term]:
    """The focus words, consecutive capitalised ones (not the question's first word) joined as names."""
    focus = set(cues.focus_words)
    terms: list[Term] = []
    name: list[str] = []
    words = question.split()

    def close_name() -> None:
        if name:
            stems = tuple(s for word in name for s in tokenize(word))
            terms.append(Term(" ".join(name), stems, True))
            name.clear()

    for index, raw in enumerate(words):
        word = raw.strip(EDGE).removesuffix("'s").removesuffix("\u2019s")
        lowered = word.lower()
        if lowered not in focus:
            close_name()
            continue
        if index > 0 and word[:1].isupper():
            name.append(word)
        else:
            close_name()
            stems = tuple(tokenize(lowered))
            if stems and not any(t.word == lowered for t in terms):
                forms = inflected_stems(lowered) if len(stems) == 1 else frozenset()
                terms.append(Term(lowered, stems, False, forms))
        if raw.rstrip()[-1:] in ",;:?!.":
            close_name()
    close_name()
    return terms
