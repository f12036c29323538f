"""core/nlp/perceptron.py scores a sentence's words together: the floats nltk sums one word at a
time, in nltk's order, and the decisions (revisions included) of a word-by-word pass."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from core.nlp import tagger
from core.nlp.perceptron import END, START, Perceptron, best_of, normalize
from tests.support.nltk_reference import perceptron_tagger

UD = Path(__file__).resolve().parents[3].parent / "shared" / "nlp" / "ud-english-ewt"
needs_ud = pytest.mark.skipif(not (UD / "en_ewt-ud-dev.conllu").is_file(), reason="UD English EWT not here")


# Features of the lone word "qwerty", each before the next in nltk's order, across the places
# where features of the previous tags and of the words meet.
IN_ORDER = [
    ("i pref1 q", "i-1 tag -START-"),
    ("i-1 tag -START-", "i-2 tag -START2-"),
    ("i-2 tag -START2-", "i tag+i-2 tag -START- -START2-"),
    ("i tag+i-2 tag -START- -START2-", "i word qwerty"),
    ("i word qwerty", "i-1 tag+i word -START- qwerty"),
    ("i-1 tag+i word -START- qwerty", "i-1 word -START2-"),
    ("i-2 tag -START2-", "i+2 word -END2-"),
]


@pytest.mark.parametrize(("earlier", "later"), IN_ORDER)
def test_scores_are_summed_in_nltks_order_where_another_order_flips_the_tag(earlier: str, later: str):
    # 1e16 + 1 rounds back to 1e16: Z scores (1e16 + 1) - 1e16 = 0 in nltk's order, below A's
    # 0.5, and 1 if `later` were added before `earlier`.
    big = 1e16
    assert (big + 1.0) - big == 0.0 and (big - big) + 1.0 == 1.0
    weights = {"bias": {"Z": big, "A": 0.5}, earlier: {"Z": 1.0}, later: {"Z": -big}}
    reference = perceptron_tagger()(load=False)
    reference.decode_json_params((weights, {}, ["A", "Z"]))
    fast = Perceptron.from_weights(weights, {}, ["A", "Z"])
    assert fast.tag(["qwerty"]) == [t for _, t in reference.tag(["qwerty"])] == ["A"]


def test_a_tie_goes_to_the_last_class_as_in_nltk():
    # nltk's max over (score, class) picks the alphabetically last class of the tied ones.
    assert best_of([1.0, 2.0, 2.0, 0.5], range(4)) == 2
    assert best_of([3.0, 2.0, 3.0], [0, 1]) == 0
    weights = {"bias": {"A": 1.0, "Z": 1.0}}
    reference = perceptron_tagger()(load=False)
    reference.decode_json_params((weights, {}, ["A", "Z"]))
    fast = Perceptron.from_weights(weights, {}, ["A", "Z"])
    assert fast.tag(["qwerty"]) == [t for _, t in reference.tag(["qwerty"])] == ["Z"]


def _word_by_word(model: Perceptron, weights: dict, words: Sequence[str], revise) -> list[str]:
    """nltk's loop, one word at a time, its scores summed feature by feature in a dict."""
    features_of = perceptron_tagger()(load=False)._get_features
    context = [*START, *(normalize(w) for w in words), *END]
    prev, prev2, tags = *START, []
    for i, word in enumerate(words):
        tag = model._tagdict.get(word)
        if not tag:
            scores = dict.fromkeys(model.classes, 0.0)
            for feature in features_of(i, word, context, prev, prev2):
                for name, weight in weights.get(feature, {}).items():
                    scores[name] += weight
            row = [scores[c] for c in model.classes]
            tag = model.classes[max(range(len(row)), key=lambda c: (row[c], c))]
            tag = revise(word, tag, row, model.classes, i)
        tags.append(tag)
        prev2, prev = prev, tag
    return tags


@needs_ud
def test_a_revised_tag_is_the_context_of_the_words_after_it_as_word_by_word():
    from scripts.train_tagger import read_conllu

    document = tagger.read_weights()
    model = tagger.load()
    sentences = [[w for w, _ in s] for s in read_conllu(UD / "en_ewt-ud-dev.conllu", limit=300)]
    calls: list[int] = []

    def revise(word: str, tag: str, scores: Sequence[float], classes: Sequence[str], i: int) -> str:
        # Depends on the scores bit for bit (a margin) and changes the next words' context.
        calls.append(i)
        second = sorted(scores)[-2]
        return "PROPN" if word[:1].isupper() and i and max(scores) - second < 3.0 else tag

    changed = 0
    for words in sentences:
        expected = _word_by_word(model, document["weights"], words, revise)
        assert model.tag(words, revise=revise) == expected, words
        changed += expected != model.tag(words)
    assert changed > 10 and calls  # the revision mattered, so the context it gives was checked
