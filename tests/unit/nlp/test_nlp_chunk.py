"""core.nlp.chunk: noun-phrase spans from UPOS tags (nltk's RegexpParser)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.nlp.chunk import noun_phrases
from core.nlp.tagger import tag_text

ROOT = Path(__file__).resolve().parents[3]


def _phrases(tagged: list[tuple[str, str]]) -> list[str]:
    return [" ".join(word for word, _ in tagged[start:end]) for start, end in noun_phrases(tagged)]


def test_spans_cover_determiners_adjectives_numbers_and_compound_nouns():
    tagged = [
        ("The", "DET"),
        ("two", "NUM"),
        ("old", "ADJ"),
        ("ferry", "NOUN"),
        ("terminals", "NOUN"),
        ("closed", "VERB"),
        ("in", "ADP"),
        ("1911", "NUM"),
        (".", "PUNCT"),
    ]
    assert noun_phrases(tagged) == [(0, 5), (7, 8)]


def test_proper_names_possessives_and_dates_are_one_chunk_each_and_pronouns_none():
    tagged = [
        ("She", "PRON"),
        ("visited", "VERB"),
        ("Ada", "PROPN"),
        ("Lovelace", "PROPN"),
        ("'s", "PART"),
        ("workshop", "NOUN"),
        ("on", "ADP"),
        ("12", "NUM"),
        ("May", "PROPN"),
        ("1843", "NUM"),
    ]
    assert _phrases(tagged) == ["Ada Lovelace 's workshop", "12 May 1843"]


def test_a_participle_after_a_determiner_belongs_to_the_phrase():
    tagged = [("a", "DET"), ("refurbished", "VERB"), ("notebook", "NOUN"), ("arrived", "VERB")]
    assert noun_phrases(tagged) == [(0, 3)]
    assert noun_phrases([("refurbished", "VERB"), ("notebooks", "NOUN")]) == [(1, 2)]


def test_with_the_shipped_tagger_on_a_sentence_in_a_new_domain():
    tagged = tag_text("The beekeeper moved forty hives to Lower Dunmore after the late frost.")
    assert _phrases(tagged) == ["The beekeeper", "forty hives", "Lower Dunmore", "the late frost"]


def test_no_words_no_chunks_and_no_nouns_no_chunks():
    assert noun_phrases([]) == []
    assert noun_phrases([("run", "VERB"), ("!", "PUNCT")]) == []


def test_chunking_on_the_ask_path_never_runs_nltks_package_init():
    # `import nltk` imports nearly all of nltk and scipy (0.7 CPU s); the chunker needs ~30 small
    # modules (core/infra/submodule.py). Module code runs through exec(), so the audit hook sees which
    # files ran; afterwards no placeholder package stays behind for a later real `import nltk`.
    script = (
        "import sys\n"
        "ran = []\n"
        "sys.addaudithook(lambda event, args: ran.append(args[0].co_filename) if event == 'exec' else None)\n"
        "from core.question.typed_spans import noun_phrases\n"
        "from core.nlp.tagging import tag_text\n"
        "text = 'The old Roman road reached Marie Curie.'\n"
        "print([span.text for span in noun_phrases(tag_text(text), text)])\n"
        "files = [name.replace(chr(92), '/') for name in ran if isinstance(name, str)]\n"
        "print(*(any(f.endswith(end) for f in files) for end in ('nltk/chunk/regexp.py', 'nltk/__init__.py')))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('nltk', 'scipy')))\n"
        "import nltk\n"
        "print(callable(nltk.pos_tag))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    phrases, ran, left, real_package = result.stdout.splitlines()
    assert phrases == str(["The old Roman road", "Marie Curie"])
    assert ran == "True False"
    assert left == "[]"
    assert real_package == "True"


def test_a_name_with_a_number_before_a_noun_modifies_it():
    tagged = [
        ("The", "DET"),
        ("airline", "NOUN"),
        ("flies", "VERB"),
        ("the", "DET"),
        ("two", "NUM"),
        ("Boeing", "PROPN"),
        ("747", "NUM"),
        ("freighters", "NOUN"),
        ("to", "ADP"),
        ("Apollo", "PROPN"),
        ("11", "NUM"),
        (".", "PUNCT"),
    ]
    # The head noun stays with its phrase; a name and number with no noun after is still a phrase.
    assert _phrases(tagged) == ["The airline", "the two Boeing 747 freighters", "Apollo 11"]
