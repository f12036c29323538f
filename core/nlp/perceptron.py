"""Tagging with weights trained by nltk's PerceptronTagger, without importing nltk.

nltk's `PerceptronTagger.tag` costs `import nltk` (1–2.5 s on this project's machines, most of
it modules the tagger never uses) and builds a dict per word. This class makes the same decisions
from the same weights: the same word normalisation and the same fourteen features, scores summed
per tag in the same order, ties broken towards the alphabetically last tag as nltk does.
tests/unit/nlp/test_nlp_tagger.py checks that it tags UD English EWT dev sentences exactly as
nltk's tagger does with the shipped weights, so a change of nltk's recipe shows there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from core.nlp.weights_table import Pairs, WeightsTable

# (word, predicted tag, score per class, class names, the word's index) -> the tag to keep
Revise = Callable[[str, str, Sequence[float], Sequence[str], int], str]
# Features the weights lack that are remembered as such (then forgotten all at once): a text
# of words the tagger never saw (names, codes) misses ~7 of its 14 features per word, and each
# miss searched the weights table again (~5% of a 100k question's CPU on first sight).
UNSEEN_KEPT = 50_000
START = ("-START-", "-START2-")
END = ("-END-", "-END2-")


def best_of(scores: Sequence[float], among: Iterable[int]) -> int:
    """The class index among `among` (ascending) with the top score; on a tie the last one, which
    is the alphabetically last class name, as nltk breaks ties (classes are kept sorted)."""
    best = None
    for c in among:
        if best is None or scores[c] >= scores[best]:
            best = c
    return best


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
        self._index = {name: i for i, name in enumerate(self.classes)}
        # Kept as read, each feature's weights turned into (class index, weight) pairs on its
        # first use: converting all 62k features up front took as long as parsing the JSON
        # (~0.1 s of every `mrptui ask`, which tags a few sentences).
        self._lookup = self._convert
        self._weights = weights
        self._pairs: dict[str, Pairs] = {}
        self._unseen: set[str] = set()
        self._tagdict = dict(tagdict)

    @classmethod
    def from_table(cls, table: WeightsTable) -> Perceptron:
        """The tagger of weights read in place (core/nlp/weights_table.py): same decisions."""
        model = cls({}, table.tagdict, table.classes)
        model._lookup = table.pairs
        return model

    def _convert(self, feature: str) -> Pairs | None:
        by_class = self._weights.get(feature)
        return tuple((self._index[c], w) for c, w in by_class.items()) if by_class else None

    def tag(self, words: Sequence[str], revise: Revise | None = None) -> list[str]:
        """One tag per word, as nltk's tagger gives them. `revise(word, tag, scores, classes, i)`
        may replace a predicted tag (the tag-dictionary's are kept); the words after it then see
        the replacement as their context."""
        context = [*START, *(normalize(w) for w in words), *END]
        prev, prev2 = START
        tags = []
        for i, word in enumerate(words):
            tag = self._tagdict.get(word)
            if not tag:
                scores = self._scores(word, context, i + 2, prev, prev2)
                tag = self.classes[best_of(scores, range(len(scores)))]
                if revise is not None:
                    tag = revise(word, tag, scores, self.classes, i)
            tags.append(tag)
            prev2, prev = prev, tag
        return tags

    def _scores(self, word: str, context: list[str], j: int, prev: str, prev2: str) -> list[float]:
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
        converted, unseen = self._pairs, self._unseen
        for feature in features:
            pairs = converted.get(feature)
            if pairs is None:
                if feature in unseen:
                    continue
                pairs = self._lookup(feature)
                if not pairs:
                    # Unseen features are unbounded: kept up to a bound, then all dropped.
                    if len(unseen) >= UNSEEN_KEPT:
                        unseen.clear()
                    unseen.add(feature)
                    continue
                # Threads may race here; they store equal tuples.
                converted[feature] = pairs
            for c, w in pairs:
                scores[c] += w
        return scores
