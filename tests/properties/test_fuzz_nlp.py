"""core.nlp on arbitrary text: no input makes the tools raise, and their outputs keep their shape."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from core.nlp.chunk import noun_phrases
from core.nlp.lexicon import lexicon
from core.nlp.tagger import UPOS, split_words, tag, tag_text, word_spans
from tests.support.fuzz_settings import bounded

TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=200)
WORD = st.one_of(st.sampled_from(["mice", "shoes", "broken", "swap", "’s", "n't", "-", "", " "]), TEXT)


@bounded(50, hunt=150)  # 3.0 CPU s at 150 (load ~10); make fuzz runs 1,500
@given(TEXT)
def test_split_tag_and_chunk_any_text(text):
    words = split_words(text)
    assert all(w and not w.isspace() for w in words)
    assert "".join(words) == "".join(text.split())  # nothing dropped but whitespace
    assert [text[a:b] for a, b in word_spans(text)] == words
    tagged = tag_text(text)
    assert [w for w, _ in tagged] == words
    assert {t for _, t in tagged} <= UPOS
    for start, end in noun_phrases(tagged):
        assert 0 <= start < end <= len(words)


@bounded(100)
@given(st.lists(WORD, max_size=30))
def test_tag_any_words(words):
    assert len(tag(words)) == len(words)


@bounded(150)
@given(WORD, WORD, st.sampled_from([None, "NOUN", "VERB", "ADJ", "ADV", "DET", "s", "bogus"]))
def test_lexicon_answers_any_word(a, b, pos):
    lex = lexicon()
    assert isinstance(lex.lemma(a, pos), str)
    for found in (lex.synonyms(a, pos), lex.hypernyms(a, pos=pos), lex.antonyms(a, pos), lex.derivations(a, pos)):
        assert isinstance(found, frozenset)
    link = lex.link(a, b, pos_a=pos)
    assert link is None or (link.a, link.b) == (a, b)
