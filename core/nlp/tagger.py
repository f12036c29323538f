"""Universal part-of-speech tags (UPOS: NOUN, PROPN, VERB, AUX, NUM, ADJ, ADP, DET, PRON, …).

nltk's averaged perceptron, trained on UD English EWT by scripts/train_tagger.py and applied by
core.nlp.perceptron (nltk's decisions without importing nltk); a tag WordNet rules out for a word
it knows is replaced by the best one it allows (`wordnet_revise`). 94.17% right on the treebank's
test split (docs/nlp.md). The weights ship as gzipped JSON in core/nlp/data and load once, on
first use, from any thread.

Words are split the way the treebank splits them, so the tagger sees what it was trained on:
clitics apart ("do" "n't", "John" "'s"), hyphens apart, every punctuation mark its own token,
numbers ("3.5", "1,200", "10:30") and abbreviations ("U.S.", "Dr.", "Y.") whole.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Sequence
from pathlib import Path

from core.nlp.cardinals import is_cardinal
from core.nlp.lazy import Lazy
from core.nlp.lexicon import lexicon
from core.nlp.perceptron import Perceptron, best_of
from core.nlp.unpacked import load_unpacked
from core.nlp.weights_table import WeightsTable, table_bytes
from core.text.words import PARTICIPLE_ENDINGS, WH_ARGUMENTS

DATA = Path(__file__).resolve().parent / "data" / "upos-ewt.json.gz"
FORMAT = "mrptui-upos-perceptron/1"
UPOS = frozenset("ADJ ADP ADV AUX CCONJ DET INTJ NOUN NUM PART PRON PROPN PUNCT SCONJ SYM VERB X".split())

# Titles the treebank writes with their period; a closed list of English, not of any document.
_TITLES = r"(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|Mt|Ft|Lt|Gen|Col|Rev|Inc|Ltd|Co|Corp|vs|etc|No|approx)\."
_WORD = re.compile(
    r"""
      (?i:n't)(?![^\W_])                        # the negative clitic: do|n't, ca|n't
    | ['’](?i:s|re|ve|ll|d|m)(?![^\W_])         # 's 're 've 'll 'd 'm
    | \d+(?i:st|nd|rd|th)(?![^\W_])              # 3rd
    | \d+(?:[.,:/]\d+)*(?!\d)                    # 3.5  1,200  10:30  12/05/2024
    | (?:[^\W\d_]\.){2,}                        # U.S.  e.g.
    | """
    + _TITLES
    + r"""(?=\s|$)
    | [A-Z]\.(?=\s+[A-Za-z])                    # an initial: Y. pestis, J. Smith
    | [^\W_]+?(?=(?i:n't)(?![^\W_]))            # the host of n't: "do" of don't
    | [^\W_]+(?:['’](?!(?i:s|re|ve|ll|d|m)(?![^\W_]))[^\W\d_]+)*   # O'Brien, rock'n'roll
    | \.{2,}|-{2,}                              # ... and --
    | \S                                        # any other mark, one at a time
    """,
    re.VERBOSE,
)


def split_words(text: str) -> list[str]:
    """The treebank's word split of `text`; punctuation marks are words of their own."""
    return _WORD.findall(text)


def word_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) character offsets in `text` of the words `split_words` gives, in order."""
    return [match.span() for match in _WORD.finditer(text)]


def read_weights(path: Path = DATA) -> dict:
    """The document scripts/train_tagger.py wrote: format, classes, tagdict, weights."""
    return _document(path.read_bytes(), path)


def _document(raw: bytes, path: Path) -> dict:
    document = json.loads(gzip.decompress(raw))
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} weights file")
    return document


def load(path: Path = DATA) -> Perceptron:
    """The tagger whose weights `path` holds, read in place from the table the first process
    made of them (once per cache: core/nlp/unpacked.py, core/nlp/weights_table.py)."""

    def unpack(raw: bytes) -> WeightsTable:
        document = _document(raw, path)
        return WeightsTable(table_bytes(document["weights"], document["tagdict"], document["classes"]))

    return Perceptron(load_unpacked(path, unpack, lambda table: table.raw, WeightsTable))


_TAGGER: Lazy[Perceptron] = Lazy(load)

CLOSED = DATA.with_name("upos-ewt-closed.json")
CLOSED_FORMAT = "mrptui-upos-closed/1"


def load_closed(path: Path = CLOSED) -> dict[str, frozenset[str]]:
    """Each closed-class tag's words in the training split (scripts/train_tagger.py)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(document, dict) or document.pop("format", None) != CLOSED_FORMAT:
        raise ValueError(f"{path}: not a {CLOSED_FORMAT} file")
    return {tag: frozenset(words) for tag, words in document.items()}


_CLOSED: Lazy[dict[str, frozenset[str]]] = Lazy(load_closed)


def closed_revise(word: str, tag: str, scores: Sequence[float], classes: Sequence[str]) -> str:
    """A closed-class tag (AUX, DET, ADP, PRON, …) on a word the training split never gave it is
    the perceptron's guess from context, not English ("WAR-3 covers hardware faults" tagged
    "hardware" AUX): the best-scoring tag the word may have replaces it. UD EWT test 94.27% →
    94.35%, dev 94.18% → 94.22% (docs/nlp.md)."""
    closed = _CLOSED.get()
    lower = word.lower()
    if tag not in closed or lower in closed[tag]:
        return tag
    return classes[
        best_of(scores, [c for c, name in enumerate(classes) if name not in closed or lower in closed[name]])
    ]


_WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
# How far below the top score the best tag WordNet allows may be and still replace it. Chosen on
# UD EWT dev (plateau 8-15 of 94.09-94.13%; 0 = off, 93.76%; no limit, 94.05% and "Why" → NOUN).
WORDNET_MARGIN = 10.0


def wordnet_revise(word: str, tag: str, scores: Sequence[float], classes: Sequence[str]) -> str:
    """Replace a noun/verb/adjective/adverb tag that WordNet denies `word` by the best-scoring tag
    it allows, when that scores within WORDNET_MARGIN of the top. The perceptron sees two words
    either side, so in "When did the Normans conquer England?" the `did` that makes `conquer` a
    verb is out of its sight and it says NOUN; WordNet has no noun "conquer". Words WordNet does
    not know, closed classes and confident guesses ("Why" as ADV: WordNet has only the noun
    "why") stay as predicted. UD EWT dev 93.76% → 94.12%, test 93.85% → 94.17% (docs/nlp.md)."""
    code = _WORDNET_POS.get(tag)
    if code is None or not word.isalpha():
        return tag
    known = lexicon().parts_of_speech(word)
    if not known or code in known:
        return tag
    best = best_of(scores, [c for c, name in enumerate(classes) if _WORDNET_POS.get(name) in known])
    return classes[best] if max(scores) - scores[best] < WORDNET_MARGIN else tag


# Marks after which a capital letter opens a sentence (or a quoted one), not a name.
_OPENERS = frozenset("\" \u201c ' \u2018 ( [ : - \u2013 \u2014".split())


def name_revise(word: str, tag: str, words: Sequence[str], index: int) -> str:
    """A capitalised word inside a sentence that neither the treebank's tag dictionary nor
    WordNet knows is a name: PROPN. The perceptron guesses unknown words from their suffix and
    neighbours, and on terse text ("Olu Bakare repaired the gate") calls "Bakare" AUX. A word
    opening the sentence is capitalised anyway, and one written in capitals is often an acronym
    of a common noun, so both stay as predicted."""
    if index == 0 or words[index - 1] in _OPENERS or tag == "PROPN":
        return tag
    if not (word[:1].isupper() and word.isalpha() and not word.isupper()):
        return tag
    return "PROPN" if not lexicon().parts_of_speech(word) else tag


def number_revise(word: str, tag: str, words: Sequence[str], index: int) -> str:
    """A cardinal written in words (core/nlp/cardinals.py) is NUM, as the treebank tags every
    one of them: too rare for the perceptron's tag dictionary, they were guessed from their
    neighbours ("up to eight books": ADJ, "cost twenty pence": NOUN). Applied after the
    perceptron, so the words after it keep their decisions. "one" keeps its guess, since
    it is a pronoun too ("the one that", "one of them"); a capitalised one inside a sentence
    belongs to a name ("Generator Two", "the Seven Years' War")."""
    if tag == "NUM" or word.lower() == "one" or not is_cardinal(word):
        return tag
    opening = index == 0 or words[index - 1] in _OPENERS
    return "NUM" if word.islower() or opening else tag


# What may follow a verb whose object or complement comes next ("sells | meters", "checks | each").
_AFTER_VERB = frozenset("DET NOUN PROPN ADJ NUM PRON VERB ADP ADV".split())


def clause_revise(words: Sequence[str], tags: Sequence[str]) -> list[str]:
    """A sentence ending in a full stop says something, and a question opening with a wh-word
    that stands for an argument ("what", "which", "who") asks about a clause, so each has a finite
    verb. When none was tagged (no AUX, and every VERB an attributive participle such as "a
    registered pharmacist"), a lower-case NOUN that is a verb's -s form (WordNet) and comes before
    what can follow a verb is that verb: in a statement the first one right after a noun, in a
    question the word right after the wh-word or right after a noun of the phrase it opens
    ("Which hut sits above Arolla?"). Terse KB text such as "Brightwater Ltd sells
    meters." or "Orion uses Helix." tags as nouns throughout otherwise, since the treebank's web
    text rarely drops its determiners, and so does a lower-case "what uses python" (its head
    noun would become "python"). Titles and list items keep their tags. On UD EWT dev 1 word
    changes (right), on test 2 (both right); the phrase places change none there and 7 SQuAD dev
    questions (all right): docs/nlp.md."""
    tags = list(tags)
    if not words or "AUX" in tags or any(t == "VERB" and not _attributive(words, tags, i) for i, t in enumerate(tags)):
        return tags
    if words[0].lower() in WH_ARGUMENTS and tags[0] in ("PRON", "DET") and len(words) > 2:
        places = [1, *_after_wh_phrase_nouns(words, tags)]
    elif words[-1] == ".":
        places = [i for i in range(1, len(words) - 1) if tags[i - 1] in ("NOUN", "PROPN")]
    else:
        return tags
    for i in places:
        following = tags[i + 1] if i + 1 < len(words) else "PUNCT"
        if following in _AFTER_VERB and _verb_s_form(words[i], tags[i]):
            tags[i] = "VERB"
            break
    return tags


def _after_wh_phrase_nouns(words: Sequence[str], tags: Sequence[str]) -> list[int]:
    """Places right after a noun of the noun phrase the wh-word opens ("which hut | sits above
    Arolla", "what type of law | concerns"): the phrase runs over nouns, adjectives, names and "of"."""
    places = []
    for i in range(2, len(words) - 1):
        if tags[i - 1] == "NOUN":
            places.append(i)
        if not (tags[i] in ("NOUN", "ADJ", "PROPN") or words[i].lower() == "of"):
            break
    return places


def _verb_s_form(word: str, tag: str) -> bool:
    return (
        tag == "NOUN"
        and word.islower()
        and word.endswith("s")
        and not word.endswith("ss")
        and lexicon().lemma(word, "v") != word
    )


def _attributive(words: Sequence[str], tags: Sequence[str], i: int) -> bool:
    return i > 0 and tags[i - 1] in ("DET", "ADJ") and words[i].lower().endswith(PARTICIPLE_ENDINGS)


def load_models() -> None:
    """Load the weights and the lexicon now (each once per process) rather than at the first `tag`."""
    _TAGGER.get()
    lexicon()


def tag(words: Sequence[str]) -> list[str]:
    """One UPOS tag per word, for words already split (empty strings tag as X). Loads the
    lexicon too (core.nlp.lexicon), for `wordnet_revise` and `name_revise`."""
    return tag_with(_TAGGER.get(), words)


def tag_with(model: Perceptron, words: Sequence[str]) -> list[str]:
    """`tag` with the weights of `model` (scripts/train_tagger.py measures fresh weights so)."""
    if not words:
        return []
    cleaned = [w if w else "_" for w in words]

    def revise(word: str, tag: str, scores: Sequence[float], classes: Sequence[str], index: int) -> str:
        tag = wordnet_revise(word, closed_revise(word, tag, scores, classes), scores, classes)
        return name_revise(word, tag, cleaned, index)

    tags = clause_revise(cleaned, model.tag(cleaned, revise=revise))
    # After the decisions, not fed back into the words after it: a NUM before "hives to Lower
    # Dunmore" turned "to" into PART and "Lower" into VERB.
    tags = [number_revise(w, t, cleaned, i) for i, (w, t) in enumerate(zip(cleaned, tags))]
    return [t if w else "X" for w, t in zip(words, tags)]


def tag_text(text: str) -> list[tuple[str, str]]:
    """(word, UPOS) for every word of `text`, split by `split_words`."""
    words = split_words(text)
    return list(zip(words, tag(words)))
