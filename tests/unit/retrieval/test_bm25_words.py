"""A stored word list answers every word's id, and only its words', without a dict."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.retrieval.bm25.words import WordList, encode
from tests.support.fuzz_settings import bounded

# Words with what JSON must escape (quotes, backslashes, newlines, non-ASCII) and words that are
# prefixes or the JSON text of other words, so a lookup that matched part of a line would show.
_PIECES = ['"', "\\", "\n", ",", "]", "[", "a", "ab", "é", "😀", " ", '\\"', "\u2028"]
words_lists = st.lists(
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join), unique=True, max_size=30
)


@bounded(200)
@given(words_lists, st.lists(st.lists(st.sampled_from(_PIECES), max_size=5).map("".join), max_size=10))
def test_every_word_finds_its_id_and_no_other_word_is_found(words, others):
    listed = WordList(encode(words), len(words))
    assert [listed.get(word) for word in words] == list(range(len(words)))
    for other in others:
        assert listed.get(other) == (words.index(other) if other in words else None)
    assert listed.words() == words == json.loads(encode(words))


def test_a_text_that_is_not_a_list_of_that_many_words_is_refused():
    with pytest.raises(ValueError):
        WordList(encode(["a", "b"]), 3)
    with pytest.raises(ValueError):
        WordList(json.dumps(["a", "b"]).encode(), 2)
