"""Tagging with weights trained by nltk's PerceptronTagger, without importing nltk.

nltk's `PerceptronTagger.tag` costs `import nltk` (1–2.5 s on this project's machines, most of
it modules the tagger never uses) and builds a dict per word. This class makes the same decisions
from the same weights: the same word normalisation and the same fourteen features, scores summed
per tag in the same order, ties broken towards the alphabetically last tag as nltk does.
tests/core/test_nlp_tagger.py checks that it tags UD English EWT dev sentences exactly as
nltk's tagger does with the shipped weights, so a change of nltk's recipe shows there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

START = ("-START-", "-START2-")
END = ("-END-", "-END2-")


def normalize(word: str) -> str:
    """nltk's PerceptronTagger.normalize."""
    if "-" in word and word[0] != "-":
        return "!HYPHEN"
    if word.isdigit() and len(word) == 4:
        return "!YEAR"
    if word and word[0].isdigit():
        return "!DIGITS"
    return word.lower()


class Perceptron:
    def __init__(
        self, weights: Mapping[str, Mapping[str, float]], tagdict: Mapping[str, str], classes: Sequence[str]
    ) -> None:
        self.classes = tuple(sorted(classes))
        index = {name: i for i, name in enumerate(self.classes)}
        self._weights = {f: tuple((index[c], w) for c, w in by_class.items()) for f, by_class in weights.items()}
        self._tagdict = dict(tagdict)

    def tag(self, words: Sequence[str]) -> list[str]:
        context = [*START, *(normalize(w) for w in words), *END]
        prev, prev2 = START
        tags = []
        for i, word in enumerate(words):
            tag = self._tagdict.get(word) or self._predict(word, context, i + 2, prev, prev2)
            tags.append(tag)
            prev2, prev = prev, tag
        return tags

    def _predict(self, word: str, context: list[str], j: int, prev: str, prev2: str) -> str:
        here, before, after = context[j], context[j - 1], context[j + 1]
        features = (
            "bias",
            "i suffix " + word[-3:],
            "i pref1 " + word[:1],
            "i-1 tag " + prev,
            "i-2 tag " + prev2,
            "i tag+i-2 tag " + prev + " " + prev2,
            "i word " + here,
            "i-1 tag+i word " + prev + " " + here,
            "i-1 word " + before,
            "i-1 suffix " + before[-3:],
            "i-2 word " + context[j - 2],
            "i+1 word " + after,
            "i+1 suffix " + after[-3:],
            "i+2 word " + context[j + 2],
        )
        scores = [0.0] * len(self.classes)
        weights = self._weights
        for feature in features:
            for c, w in weights.get(feature, ()):
                scores[c] += w
        best = 0
        for c in range(1, len(scores)):
            if scores[c] >= scores[best]:
                best = c
        return self.classes[best]
