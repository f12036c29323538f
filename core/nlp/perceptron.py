"""Tagging with weights trained by nltk's PerceptronTagger, without importing nltk.

nltk's `PerceptronTagger.tag` costs `import nltk` (1–2.5 s on this project's machines, most of
it modules the tagger never uses) and builds a dict per word. This class makes the same decisions
from the same weights: the same word normalisation and the same fourteen features, scores summed
per tag in the same order, ties broken towards the alphabetically last tag as nltk does.
tests/unit/nlp/test_nlp_tagger.py checks that it tags UD English EWT dev sentences exactly as
nltk's tagger does with the shipped weights, so a change of nltk's recipe shows there.

nltk scores one word at a time, since four of the features are the tags just given to the two
words before it. Summing each word's (class, weight) pairs in Python was ~18 µs a word, most of
`ask`'s tagging. Here a sentence's words are scored together with numpy over dense rows (one
float64 per class and feature), the fourteen rows added one after the other in nltk's order,
so every score is the same float; the previous tags are first guessed, then every word whose
guessed context turned out wrong is scored again, until none is (`tag` says why that ends).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from core.nlp.weights_table import WeightsTable, table_bytes

# (word, predicted tag, score per class, class names, the word's index) -> the tag to keep
Revise = Callable[[str, str, Sequence[float], Sequence[str], int], str]
# Features the weights lack that are remembered as such (then forgotten all at once): a text
# of words the tagger never saw (names, codes) misses ~7 of its 14 features per word, and each
# miss searched the weights table again (~5% of a 100k question's CPU on first sight).
UNSEEN_KEPT = 50_000
# Words whose feature rows are remembered (then forgotten all at once), and as many pairs of a
# previous tag and a word.
WORDS_KEPT = 50_000
START = ("-START-", "-START2-")
# The tag a word's unscored neighbour is first guessed to have: the commonest one the tag
# dictionary leaves to the scores (a wrong guess costs a word another pass, never its tag).
GUESS = "NOUN"
END = ("-END-", "-END2-")


def best_of(scores: Sequence[float], among: Iterable[int]) -> int:
    """The class index among `among` (ascending) with the top score; on a tie the last one, which
    is the alphabetically last class name, as nltk breaks ties (classes are kept sorted)."""
    best = None
    for c in among:
        if best is None or scores[c] >= scores[best]:
            best = c
    assert best is not None, "no class to choose among"
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
    def __init__(self, table: WeightsTable) -> None:
        self.classes = table.classes
        self._tagdict = table.tagdict
        self._table = table
        self._lookup = table.find
        # One row per feature of the table, written on the feature's first use, and a last row
        # of zeros for a feature the weights lack. np.zeros maps pages untouched until written,
        # so the 62k × 17 rows cost only the pages of the features a process meets.
        self._rows = np.zeros((table.features + 1, len(self.classes)))
        self._absent = table.features
        self._ids: dict[str, int] = {}
        self._unseen: set[str] = set()
        # Row numbers of the features a word gives (`_word_ids`), of a pair of previous tags, and
        # of a previous tag with a word: built once per word or pair, not once per use.
        self._words: dict[str, tuple[int, ...]] = {}
        self._tags: dict[tuple[str, str], tuple[int, int, int]] = {}
        self._tag_words: dict[tuple[str, str], int] = {}
        self._guess = self.classes.index(GUESS) if GUESS in self.classes else 0
        self._bias = self._id("bias")
        self._marks = [self._word_ids("", mark) for mark in (*START, *END)]

    @classmethod
    def from_weights(
        cls, weights: Mapping[str, Mapping[str, float]], tagdict: Mapping[str, str], classes: Sequence[str]
    ) -> Perceptron:
        """The tagger of weights as scripts/train_tagger.py writes them (feature → class → weight)."""
        return cls(WeightsTable(table_bytes(weights, tagdict, classes)))

    def tag(self, words: Sequence[str], revise: Revise | None = None) -> list[str]:
        """One tag per word, as nltk's tagger gives them. `revise(word, tag, scores, classes, i)`
        may replace a predicted tag (the tag-dictionary's are kept); the words after it then see
        the replacement as their context. `revise` must be a function of its arguments alone:
        a word may be scored (and revised) more than once, in contexts guessed on the way."""
        tags = [self._tagdict.get(word, "") for word in words]
        scored = [i for i, tag in enumerate(tags) if not tag]
        if not scored:
            return tags
        rows = self._static_rows(words, scored)
        # bias + suffix + first letter: the first three of nltk's features, the same each pass
        head = rows[0] + rows[1]
        head += rows[2]
        guess = self.classes[self._guess]
        for i in scored:
            tags[i] = guess
        seen: list[tuple[str, str] | None] = [None] * len(scored)
        todo = list(range(len(scored)))
        # Each pass settles at least the first word still to do, since its context (the tags of
        # the two words before it) is then final: at most one pass per scored word.
        for _pass in range(len(scored)):
            contexts = [_previous(tags, scored[k]) for k in todo]
            dynamic = [self._tag_ids(prev, prev2, words[scored[k]]) for k, (prev, prev2) in zip(todo, contexts)]
            every = len(todo) == len(scored)
            scores = self._sum(head if every else head[todo], rows if every else rows[:, todo], dynamic)
            best = len(self.classes) - 1 - scores[:, ::-1].argmax(axis=1)
            kept = scores.tolist() if revise is not None else None
            for n, k in enumerate(todo):
                i = scored[k]
                tag = self.classes[best[n]]
                if revise is not None and kept is not None:
                    tag = revise(words[i], tag, kept[n], self.classes, i)
                tags[i] = tag
                seen[k] = contexts[n]
            todo = [k for k in range(len(scored)) if seen[k] != _previous(tags, scored[k])]
            if not todo:
                break
        return tags

    def _static_rows(self, words: Sequence[str], scored: list[int]) -> np.ndarray:
        """Rows (feature, scored word, class) of the ten features that do not depend on the
        previous tags: bias, suffix, first letter, the word, the two words either side and their
        suffixes."""
        cached, marks = self._words, self._marks
        context = [marks[0], marks[1]]
        for word in words:
            word_ids = cached.get(word)
            if word_ids is None:
                if len(cached) >= WORDS_KEPT:
                    cached.clear()
                word_ids = cached[word] = self._word_ids(word, normalize(word))
            context.append(word_ids)
        context += marks[2:]
        bias, ids = self._bias, []
        for i in scored:
            here, before, after = context[i + 2], context[i + 1], context[i + 3]
            ids.append(
                (
                    bias,
                    here[0],
                    here[1],
                    here[2],
                    before[3],
                    before[4],
                    context[i][5],
                    after[6],
                    after[7],
                    context[i + 4][8],
                )
            )
        return self._rows[np.array(ids, dtype=np.intp).T]

    def _word_ids(self, word: str, token: str) -> tuple[int, ...]:
        """The rows of the features `word` (`token` once normalised) gives as the word scored
        (suffix, first letter, itself) and as each neighbour of it."""
        find = self._id
        return (
            find("i suffix " + word[-3:]),
            find("i pref1 " + word[:1]),
            find("i word " + token),
            find("i-1 word " + token),
            find("i-1 suffix " + token[-3:]),
            find("i-2 word " + token),
            find("i+1 word " + token),
            find("i+1 suffix " + token[-3:]),
            find("i+2 word " + token),
        )

    def _tag_ids(self, prev: str, prev2: str, word: str) -> tuple[int, int, int, int]:
        """The rows of the four features of the previous tags."""
        tags = self._tags.get((prev, prev2))
        if tags is None:
            tags = self._tags[prev, prev2] = (
                self._id("i-1 tag " + prev),
                self._id("i-2 tag " + prev2),
                self._id("i tag+i-2 tag " + prev + " " + prev2),
            )
        tag_word = self._tag_words.get((prev, word))
        if tag_word is None:
            if len(self._tag_words) >= WORDS_KEPT:
                self._tag_words.clear()
            tag_word = self._tag_words[prev, word] = self._id("i-1 tag+i word " + prev + " " + normalize(word))
        return (*tags, tag_word)

    def _sum(self, head: np.ndarray, rows: np.ndarray, dynamic: list[tuple[int, int, int, int]]) -> np.ndarray:
        """Each word's scores, its rows added one after the other in the order of nltk's features
        (a float sum in another order may differ in the last bit, and a tie or WORDNET_MARGIN
        with it): after `head` the previous tag, the one before, both, the word, the previous
        tag with the word, then the neighbours."""
        tagged = self._rows[np.array(dynamic, dtype=np.intp).T]
        scores = head + tagged[0]
        for part in (tagged[1], tagged[2], rows[3], tagged[3], *rows[4:]):
            scores += part
        return scores

    def _id(self, feature: str) -> int:
        f = self._ids.get(feature)
        if f is not None:
            return f
        if feature in self._unseen:
            return self._absent
        f = self._lookup(feature)
        if f is None:
            # Unseen features are unbounded: kept up to a bound, then all dropped.
            if len(self._unseen) >= UNSEEN_KEPT:
                self._unseen.clear()
            self._unseen.add(feature)
            return self._absent
        # Threads may race here; they write equal rows, each before naming it.
        self._table.fill(f, self._rows[f])
        self._ids[feature] = f
        return f


def _previous(tags: Sequence[str], i: int) -> tuple[str, str]:
    """The tags of the two words before word i (nltk's START marks before the first)."""
    if i >= 2:
        return tags[i - 1], tags[i - 2]
    return (tags[0], START[0]) if i == 1 else START
