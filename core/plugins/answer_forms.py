"""Answer forms for gs-symbolic: which shape a question asks for, and that shape built from evidence.

Each form leads with what was asked (Yes/No, a name, the items, the statement explained, one line
per compared side), then "because" and the evidence sentences, each with its unit id. Every rule
of thumb here reads the question's wording or general English sentence shape (capitalised names,
negation words, enumerations, ordinal sentences), never a word of any particular KB; each is listed
in docs/decisions.md under "Answer forms".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from core.cnl import split_sentences
from core.intent_cues import QuestionCues
from core.text import STOPWORDS, tokenize
from core.units import Act, KnowledgeUnit

# A yes/no question with this many terms may leave one unmatched (an irregular verb form such as
# "see"/"seen" defeats the stemmer); with fewer, every term must be in the evidence.
_LENIENT_FROM_TERMS = 4
# Sentences before and after the one that matches: enough for a pronoun's referent or a reason.
_WINDOW_BEFORE = 2
_EXPLANATION_BEFORE = 1
_EXPLANATION_AFTER = 2
_MAX_SIDE_SENTENCES = 2
# Units starting within this many lines of each other are one stretch of text: a paragraph's
# units, or the paragraph after a blank line. Farther apart they may be pages apart.
_NEIGHBOUR_LINES = 3
# A compared side named within this many words of a sentence's start is what the sentence is about.
_SUBJECT_WORDS = 4
_EDGE = ".,;:!?()[]{}\"'`\u2018\u2019\u201c\u201d"

# Words that deny what their clause states. A cue the question itself uses ("Was the claim
# denied?", "… without a reason?") is the thing asked about, not a denial, so it is skipped there.
_NEGATIONS = frozenset("not never nobody nothing neither nor cannot without refused declined denied lacked".split())
# Determiners deny only the noun they stand before: "no ledger" denies a ledger, "at no charge"
# denies nothing the question asks about.
_NOUN_NEGATIONS = frozenset("no none".split())
_CLAUSE_BREAK = re.compile(r"[,;:\u2013\u2014]|\b(?:but|although|though|because|while|whereas|yet)\b", re.IGNORECASE)
_ENTITY_OPENERS = frozenset("who whom whose which".split())
_ENTITY_PHRASE = re.compile(r"^\s*(?:name the|what is the name|what was the name)\b", re.IGNORECASE)
_ENUMERATION = re.compile(r"(?P<items>(?:[^,;:]+,\s+)+[^,;:]+?\s+(?:and|or)\s+[^,;:]+?)[.!?]?$")
_ORDINAL = re.compile(r"^(?:the\s+)?(?:first|second|third|fourth|fifth|sixth|next|last|finally)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Draft:
    """An answer before the weakness check: its text, the ids it cites in order, how it was built,
    and why it cannot answer (empty when it can)."""

    text: str
    cited: tuple[str, ...]
    method: str
    cannot_tell: str = ""


class Form(StrEnum):
    YES_NO = "yes_no"
    ENTITY = "entity"
    LIST = "list"
    EXPLANATION = "explanation"
    COMPARISON = "comparison"
    CLAIMS = "claims"


def form_of(question: str, cues: QuestionCues, act: Act) -> Form:
    """The form the wording asks for, given the intent's act (a seed detector may set it); the
    opening question word beats the act ("Which technician detected the failure?" names someone,
    although "failure" cues diagnose)."""
    first = question.strip().split()[0].lower().strip(_EDGE) if question.strip() else ""
    if cues.output == "yes_no":
        return Form.YES_NO
    if cues.output == "list":
        return Form.LIST
    if first in _ENTITY_OPENERS or _ENTITY_PHRASE.match(question):
        return Form.ENTITY
    if act is Act.COMPARE and len(cues.compared) >= 2:
        return Form.COMPARISON
    if act in (Act.EXPLAIN, Act.DIAGNOSE) and (first == "why" or cues.act_cue):
        return Form.EXPLANATION
    if act is Act.IDENTIFY or cues.output == "one_word":
        return Form.ENTITY
    return Form.CLAIMS


@dataclass(frozen=True)
class Term:
    """One thing the question names: a content word, or a capitalised name whose any word counts
    (a story calls "Ines Harrow" "Ines" after introducing her)."""

    word: str
    stems: tuple[str, ...]
    is_name: bool

    def found_in(self, seen: set[str]) -> bool:
        if self.is_name:
            return any(stem in seen for stem in self.stems)
        return self.stems[0] in seen or (len(self.stems) > 1 and all(s in seen for s in self.stems[1:]))


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
        word = raw.strip(_EDGE).removesuffix("'s").removesuffix("\u2019s")
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
                terms.append(Term(lowered, stems, False))
        if raw.rstrip()[-1:] in ",;:?!.":
            close_name()
    close_name()
    return terms


@dataclass(frozen=True)
class Sentence:
    text: str
    unit: KnowledgeUnit
    stems: frozenset[str]

    def cited(self) -> str:
        return f"{self.text.rstrip('.')} [{self.unit.id}]."


class Evidence:
    """The kept units' sentences, in rank order and in reading order (by source and position)."""

    def __init__(self, units: Sequence[KnowledgeUnit]):
        self.units = list(units)
        self.by_unit: dict[str, list[Sentence]] = {}
        for unit in self.units:
            self.by_unit[unit.id] = [
                Sentence(s.text, unit, frozenset(tokenize(s.text))) for s in split_sentences(unit.body)
            ]
        reading = sorted(self.units, key=_reading_key)
        self.reading: list[Sentence] = [s for unit in reading for s in self.by_unit[unit.id]]
        self._position = {id(s): i for i, s in enumerate(self.reading)}

    def ranked(self) -> Iterator[Sentence]:
        for unit in self.units:
            yield from self.by_unit[unit.id]

    def around(self, sentence: Sentence, before: int, after: int) -> tuple[list[Sentence], list[Sentence]]:
        """Neighbouring kept sentences: of the same unit, or of a kept unit of the same file that
        starts within a few lines of it (the next or previous stretch of text, not a later page)."""
        at = self._position[id(sentence)]
        earlier = [s for s in self.reading[max(0, at - before) : at] if _adjacent(s.unit, sentence.unit)]
        later = [s for s in self.reading[at + 1 : at + 1 + after] if _adjacent(s.unit, sentence.unit)]
        return earlier, later


def _adjacent(one: KnowledgeUnit, other: KnowledgeUnit) -> bool:
    if one.id == other.id:
        return True
    a, b = one.location, other.location
    return a is not None and b is not None and a.file == b.file and abs(a.line - b.line) <= _NEIGHBOUR_LINES


def _reading_key(unit: KnowledgeUnit) -> tuple[str, str, int, str]:
    """Source, file and line; units starting on one line keep their id order (chunk, unit)."""
    where = unit.location
    return (unit.source_id, where.file if where else "", where.line if where else 0, unit.id)


def covered(terms: Sequence[Term], sentences: Sequence[Sentence]) -> list[Term]:
    seen: set[str] = set().union(*(s.stems for s in sentences)) if sentences else set()
    return [term for term in terms if term.found_in(seen)]


# --- yes / no -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """Yes, No, or None (cannot tell), with the sentences that decided it."""

    answer: str | None
    because: tuple[Sentence, ...]


def yes_no(question: str, terms: Sequence[Term], evidence: Evidence) -> Verdict:
    """Yes when a passage states every term (one may be missing among four or more) and no such
    passage denies it; No when one does, a negation word sharing a clause with a question term;
    otherwise cannot tell, quoting the closest passage. Co-mention alone is weak support, so one
    denial outweighs any number of statements ("asked the priory to pay" / "the priory refused")."""
    need = len(terms) - 1 if len(terms) >= _LENIENT_FROM_TERMS else len(terms)
    passages = []
    for rank, sentence in enumerate(evidence.ranked()):
        if covered(terms, [sentence]):
            window = passage(sentence, terms, evidence)
            passages.append((len(covered(terms, window)), -len(window), rank, tuple(window), sentence))
    passages.sort(key=lambda p: (-p[0], -p[1], p[2]))
    stated = [p for p in passages if terms and p[0] >= need]
    if not stated:
        closest = passages[0][3] if passages else ()
        return Verdict(None, closest)
    for _, _, _, window, sentence in stated:
        if denies(sentence, terms, question):
            return Verdict("No", window)
    return Verdict("Yes", stated[0][3])


def passage(sentence: Sentence, terms: Sequence[Term], evidence: Evidence) -> list[Sentence]:
    """The sentence and as few sentences before it as add question terms (a pronoun's referent:
    "Ines spent six minutes on the vault lock. The lock did not need force")."""
    window = [sentence]
    earlier, _ = evidence.around(sentence, _WINDOW_BEFORE, 0)
    for before in reversed(earlier):
        if len(covered(terms, [before, *window])) > len(covered(terms, window)):
            window.insert(0, before)
    return window


def denies(sentence: Sentence, terms: Sequence[Term], question: str) -> bool:
    """A negation word in a clause naming a question term, or a question word replaced at its
    place ("Is it a good fit?" / "It is a poor fit")."""
    asked = {w.strip(_EDGE).lower() for w in question.split()}
    for clause in _CLAUSE_BREAK.split(sentence.text):
        words = [w.strip(_EDGE).lower() for w in clause.split()]
        named = covered(terms, [Sentence(clause, sentence.unit, frozenset(tokenize(clause)))])
        for index, word in enumerate(words):
            if word in asked:
                continue
            if (word in _NEGATIONS or word.endswith("n't")) and named:
                return True
            following = set(tokenize(" ".join(words[index + 1 : index + 3])))
            if word in _NOUN_NEGATIONS and any(term.found_in(following) for term in terms):
                return True
    return replaced(sentence, terms, question)


def replaced(sentence: Sentence, terms: Sequence[Term], question: str) -> bool:
    """A question word the sentence lacks, directly before a question word the sentence has, with
    another content word in its place: "a good fit" asked, "a poor fit" stated."""
    asked = [w.strip(_EDGE).lower() for w in question.split()]
    said = [w.strip(_EDGE).lower() for w in sentence.text.split()]
    missing = {t.word for t in terms if not t.is_name and not t.found_in(set(sentence.stems))}
    for word, after in zip(asked, asked[1:]):
        if word not in missing or not tokenize(after):
            continue
        for index, here in enumerate(said[1:], start=1):
            before = said[index - 1]
            if tokenize(here) == tokenize(after) and tokenize(before) and tokenize(before) != tokenize(word):
                return True
    return False


# --- single entity --------------------------------------------------------------------------------


def entity(terms: Sequence[Term], evidence: Evidence) -> tuple[str, Sentence] | None:
    """The name the best-matching sentence ties to the question's terms: a fact's other end, or
    the capitalised name nearest the matched words. Names the question already gives are not
    answers; a capitalised first word counts only if the evidence also capitalises it mid-sentence."""
    names_mid = _mid_sentence_capitals(evidence)
    best: tuple[tuple[int, int, int], str, Sentence] | None = None
    for rank, sentence in enumerate(evidence.ranked()):
        count = len(covered(terms, [sentence]))
        if 2 * count < len(terms) or count == 0:
            continue
        for name, distance in _names_in(sentence, terms, names_mid):
            key = (-count, distance, rank)
            if best is None or key < best[0]:
                best = (key, name, sentence)
    return (best[1], best[2]) if best else None


def _names_in(sentence: Sentence, terms: Sequence[Term], names_mid: set[str]) -> Iterator[tuple[str, int]]:
    unit = sentence.unit
    asked = {stem for term in terms for stem in term.stems}
    if unit.subject and unit.object and len(split_sentences(unit.body)) == 1:
        for end in (unit.subject, unit.object):
            if not set(tokenize(end)) <= asked:
                yield end, 0
        return
    words = sentence.text.split()
    hits = [i for i, w in enumerate(words) if set(tokenize(w.strip(_EDGE))) & asked]
    run: list[tuple[int, str]] = []
    capitals = [_is_capital(raw) for raw in words]
    for index, raw in enumerate([*words, ""]):
        word = raw.strip(_EDGE).removesuffix("'s").removesuffix("\u2019s")
        # A capitalised first word is a name when the evidence capitalises it mid-sentence too, or
        # the next word continues it ("Tobiah Kell drove …"); else it may be any word ("Inside …").
        first_is_name = word in names_mid or (len(capitals) > 1 and capitals[1] and raw[-1:] not in _EDGE)
        if _is_capital(raw) and (index > 0 or first_is_name) and word.lower() not in STOPWORDS:
            run.append((index, word))
            if raw[-1:] not in _EDGE:
                continue
        if run and not set(tokenize(" ".join(w for _, w in run))) & asked:
            start, end = run[0][0], run[-1][0]
            distance = min((min(abs(h - start), abs(h - end)) for h in hits), default=len(words))
            yield " ".join(w for _, w in run), distance
        run = []


def _is_capital(raw: str) -> bool:
    word = raw.strip(_EDGE)
    return bool(word) and word[:1].isupper() and any(ch.isalpha() for ch in word)


def _mid_sentence_capitals(evidence: Evidence) -> set[str]:
    names = set()
    for sentence in evidence.reading:
        for raw in sentence.text.split()[1:]:
            word = raw.strip(_EDGE).removesuffix("'s").removesuffix("\u2019s")
            if word[:1].isupper():
                names.add(word)
    return names


# --- list -----------------------------------------------------------------------------------------


def list_items(terms: Sequence[Term], evidence: Evidence) -> tuple[list[str], list[Sentence]] | None:
    """Items of the best-matching sentence's enumeration ("…: a, b and c"), or the run of ordinal
    sentences ("The first …", "The second …") that follows it."""
    ranked = sorted(
        enumerate(evidence.ranked()), key=lambda pair: (-len(covered(terms, [pair[1]])), pair[0])
    )
    for _, sentence in ranked:
        if not covered(terms, [sentence]):
            break
        items = enumeration(sentence.text)
        if items:
            return items, [sentence]
        _, later = evidence.around(sentence, 0, 4)
        ordinals = []
        for follower in later:
            if _ORDINAL.match(follower.text):
                ordinals.append(follower)
        if len(ordinals) >= 2:
            return [s.text.rstrip(".") for s in ordinals], [sentence, *ordinals]
    return None


def enumeration(text: str) -> list[str]:
    """"a, b and c" (after a colon when there is one) as its items; [] when there is none."""
    tail = text.split(":", 1)[1] if ":" in text else text
    match = _ENUMERATION.search(tail.strip())
    if not match:
        return []
    head, last = re.split(r",\s+", match.group("items")), []
    final = re.split(r"\s+(?:and|or)\s+", head.pop(), maxsplit=1)
    last = [part.strip() for part in final if part.strip()]
    items = [item.strip() for item in head if item.strip()] + last
    return items if len(items) >= 2 else []


# --- explanation ----------------------------------------------------------------------------------


def explanation(terms: Sequence[Term], evidence: Evidence) -> tuple[Sentence, list[Sentence]] | None:
    """The sentence stating what is asked about, and its neighbours: the sentence before it and
    two after (text gives a reason on either side of what it explains)."""
    best = None
    for rank, sentence in enumerate(evidence.ranked()):
        count = len(covered(terms, [sentence]))
        if count and (best is None or (-count, rank) < best[0]):
            best = ((-count, rank), sentence)
    if best is None or 2 * -best[0][0] < len(terms):
        return None
    anchor = best[1]
    earlier, later = evidence.around(anchor, _EXPLANATION_BEFORE, _EXPLANATION_AFTER)
    return anchor, [*earlier, *later]


# --- comparison -----------------------------------------------------------------------------------


def comparison(compared: Sequence[str], evidence: Evidence) -> tuple[list[Sentence], list[tuple[str, list[Sentence]]]]:
    """Sentences naming every side, then per side the sentences about it alone. A side is
    recognised by its first word the other sides lack ("Moreau group" / "Castellan group");
    sentences naming it near their start come first, and a following sentence on the side's
    other words ("… the market in Oswick. The market was …") continues it."""
    sides = [(name, tokenize(name)) for name in compared]
    marks = []
    for name, stems in sides:
        others = {s for other, o in sides if other != name for s in o}
        marks.append(next((s for s in stems if s not in others), stems[0] if stems else ""))
    both = [s for s in evidence.reading if all(mark in s.stems for mark in marks)][:_MAX_SIDE_SENTENCES]
    lines = []
    for (name, stems), mark in zip(sides, marks):
        rest = set(stems) - {mark}
        other_marks = set(marks) - {mark}
        about = [s for s in evidence.reading if mark in s.stems and not (other_marks & s.stems)]
        about.sort(key=lambda s: (not _near_start(s, mark), evidence.reading.index(s)))
        chosen: list[Sentence] = []
        for sentence in about[:_MAX_SIDE_SENTENCES]:
            chosen.append(sentence)
            _, later = evidence.around(sentence, 0, 1)
            if later and rest & later[0].stems and not (other_marks & later[0].stems) and later[0] not in chosen:
                chosen.append(later[0])
        lines.append((name, chosen))
    return both, lines


def _near_start(sentence: Sentence, stem: str) -> bool:
    return stem in set(tokenize(" ".join(sentence.text.split()[:_SUBJECT_WORDS])))


# --- drafts ---------------------------------------------------------------------------------------


def form_draft(form: Form, question: str, cues: QuestionCues, units: Sequence[KnowledgeUnit]) -> Draft | None:
    """The answer in the form asked for, or None when the evidence has no such shape (the caller
    then quotes the evidence as before)."""
    evidence = Evidence(units)
    terms = question_terms(question, cues)
    if form is Form.YES_NO:
        return _yes_no_draft(question, terms, evidence)
    if form is Form.ENTITY:
        found = entity(terms, evidence)
        return _draft(found[0], [found[1]], f"entity from {found[1].unit.id}") if found else None
    if form is Form.LIST:
        listed = list_items(terms, evidence)
        if listed is None:
            return None
        items, sources = listed
        numbered = "; ".join(f"{n}. {item}" for n, item in enumerate(items, start=1))
        return _draft(numbered, sources, f"{len(items)} listed item(s) from {sources[0].unit.id}")
    if form is Form.EXPLANATION:
        explained = explanation(terms, evidence)
        if explained is None:
            return None
        anchor, reasons = explained
        lead = anchor.cited().rstrip(".")
        method = f"explained {anchor.unit.id} by {len(reasons)} neighbouring sentence(s)"
        if not reasons:
            return Draft(f"{lead}.", (anchor.unit.id,), method)
        drafted = _draft(lead, reasons, method)
        return Draft(drafted.text, _ids([anchor, *reasons]), method)
    if form is Form.COMPARISON:
        return _comparison_draft(cues, evidence)
    return None


def _draft(lead: str, because: Sequence[Sentence], method: str) -> Draft:
    text = f"{lead}, because: {' '.join(s.cited() for s in because)}"
    return Draft(text, _ids(because), method)


def _ids(sentences: Sequence[Sentence]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.unit.id for s in sentences))


def _yes_no_draft(question: str, terms: Sequence[Term], evidence: Evidence) -> Draft:
    verdict = yes_no(question, terms, evidence)
    if verdict.answer is not None:
        return _draft(verdict.answer, verdict.because, f"yes/no from the polarity of {verdict.because[-1].unit.id}")
    asked = " ".join(question.split()).split("?")[0].strip()
    closest = f" The closest evidence says: {' '.join(s.cited() for s in verdict.because)}" if verdict.because else ""
    missing = [t.word for t in terms if t not in covered(terms, verdict.because)]
    reason = f"no passage states or denies it (unmatched: {', '.join(missing) or 'none'})"
    return Draft(
        f"cannot tell from the evidence whether the answer to \"{asked}?\" is yes or no.{closest}",
        _ids(verdict.because),
        f"yes/no: {reason}",
        cannot_tell=reason,
    )


def _comparison_draft(cues: QuestionCues, evidence: Evidence) -> Draft | None:
    """One line for what names every side, then one line per side; a side nothing names says so."""
    both, sides = comparison(cues.compared, evidence)
    if not both and not any(sentences for _, sentences in sides):
        return None
    lines = [" ".join(s.cited() for s in both)] if both else []
    for name, sentences in sides:
        if sentences:
            lines.append(f"{name}: {' '.join(s.cited() for s in sentences)}")
        elif not both:
            lines.append(f"{name}: no kept evidence mentions it.")
    cited = _ids([*both, *(s for _, sentences in sides for s in sentences)])
    return Draft("\n".join(lines), cited, f"compared {' / '.join(cues.compared)} sentence by sentence")
