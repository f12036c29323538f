"""Answer forms for gs-symbolic: which shape a question asks for, and that shape built from evidence.

Each form leads with what was asked (Yes/No, a name, the items, the statement explained, one line
per compared side), then "because" and the evidence sentences, each with its unit id. Every rule
of thumb reads the question's wording or general English sentence shape (capitalised names,
enumerations, ordinal sentences; negation words in core/answer/polarity.py), never a word of any
particular KB; each is listed in docs/decisions.md under "Answer forms".
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from core.answer.passages import Evidence, Sentence, covered
from core.cnl import split_sentences
from core.kernel.events import AnswerDetail
from core.question import Question
from core.question.answer_types import AnswerType, Expected
from core.question.intent_cues import ALTERNATIVES, QuestionCues
from core.question.terms import EDGE, Term
from core.text.tokenizer import STOPWORDS, tokenize
from core.text.words import (
    ENTITY_WH,
    ITEM_OPENERS,
    NAME_REQUESTS,
    PERSON_WH,
    REASON_CONNECTIVES,
    REFERS_BACK,
    WH_WORDS,
    any_of,
)
from core.units import Act, KnowledgeUnit

# Sentences around the one stating what is explained: text gives reasons on either side.
_EXPLANATION_BEFORE = 1
_EXPLANATION_AFTER = 2
# A connective introducing a reason inside the sentence: it explains itself.
_GIVES_REASON = re.compile(rf"\b{any_of(REASON_CONNECTIVES)}\b", re.IGNORECASE)
_MAX_SIDE_SENTENCES = 2
# Ordinal sentences ("The second cause …") counted as list items within this many sentences.
_ORDINAL_REACH = 4
# Ordinal sentences read after the one a list question matched, at most.
_MAX_ORDINALS = 10
# A compared side named within this many words of a sentence's start is what the sentence is about.
_SUBJECT_WORDS = 4
_ENTITY_LENIENT_FROM_TERMS = 3
_ENTITY_PHRASE = re.compile(rf"^\s*{any_of(NAME_REQUESTS)}\b", re.IGNORECASE)
_ENUMERATION = re.compile(r"(?P<items>(?:[^,;:]+,\s+)+[^,;:]+?\s+(?:and|or)\s+[^,;:]+?)[.!?]?$")
_ORDINAL = re.compile(rf"^(?:the\s+)?{any_of(ITEM_OPENERS)}\b", re.IGNORECASE)


@dataclass(frozen=True)
class Draft:
    """An answer before the weakness check: its text, the ids it cites in order, how it was built,
    why it cannot answer (empty when it can), and `lead`, the short answer its text leads with
    ("" when it quotes evidence without one): every surface reads the lead from here, never by
    parsing the text back."""

    text: str
    cited: tuple[str, ...]
    method: str
    cannot_tell: str = ""
    detail: AnswerDetail | None = None
    lead: str = ""

    @classmethod
    def led(
        cls, lead: str, because: str, cited: Sequence[str], method: str, detail: AnswerDetail | None = None
    ) -> Draft:
        """An answer that leads with `lead`, then what it rests on: the one place "LEAD, because: …"
        is written."""
        return cls(f"{lead}, because: {because}", tuple(cited), method, detail=detail, lead=lead.strip())


_ASKS_YES_NO = re.compile(r"\byes\s*(?:or|/)\s*no\b", re.IGNORECASE)


class Form(StrEnum):
    YES_NO = "yes_no"
    ENTITY = "entity"
    LIST = "list"
    EXPLANATION = "explanation"
    COMPARISON = "comparison"
    CLAIMS = "claims"


def quoted_question(question: str) -> str:
    """The question as a "cannot tell" quotes it: on one line, ending in one "?" (a question typed
    without one reaches the engine as a statement, "What is the gate code.")."""
    return " ".join(question.split()).rstrip(" ?.!") + "?"


def form_of(question: str, cues: QuestionCues, act: Act, expected: Expected | None = None) -> Form:
    """The form the wording asks for, given the intent's act (a seed detector may set it); the
    opening question word beats the act ("Which technician detected the failure?" names someone,
    although "failure" cues diagnose), and so does a fronted auxiliary (`expected`, the answer
    type the question's grammar asks for: "Had she consented …?" and "Did the documents list
    one?" ask yes or no, whatever "consented" or "list" cue)."""
    first = question.strip().split()[0].lower().strip(EDGE) if question.strip() else ""
    asks_yes_no = cues.output == "yes_no" or (expected is not None and expected.type is AnswerType.YES_NO)
    # A verify act defaults to a yes/no shape, but "What is the refund policy?" asks for content:
    # a wh-question is answered yes or no only when it says so.
    if asks_yes_no and (first not in WH_WORDS or _ASKS_YES_NO.search(question)):
        return Form.YES_NO
    if cues.output == "list":
        return Form.LIST
    if first in ENTITY_WH or _ENTITY_PHRASE.match(question):
        return Form.ENTITY
    if act is Act.COMPARE and len(cues.compared) >= 2:
        return Form.COMPARISON
    if act in (Act.EXPLAIN, Act.DIAGNOSE) and (first == "why" or cues.act_cue):
        return Form.EXPLANATION
    if act is Act.IDENTIFY or cues.output == "one_word":
        return Form.ENTITY
    return Form.CLAIMS


# --- single entity --------------------------------------------------------------------------------


def entity(question: str, terms: Sequence[Term], evidence: Evidence) -> tuple[str, Sentence] | None:
    """The name the best-matching sentence ties to the question's terms: a fact's other end, or a
    capitalised name; first one standing beside the noun the question asks for ("Which room …?" /
    "in room B-201"), then one in subject position (before the matched words, or after "by"),
    then the one nearest them; for "who", a name without digits first. The sentence must hold every term (all but one among three or
    more): "Vault is part of Orion" does not say who owns Orion. Names the question gives are not
    answers; a capitalised first word counts only if the evidence also capitalises it mid-sentence."""
    names_mid = _mid_sentence_capitals(evidence)
    need = len(terms) - 1 if len(terms) >= _ENTITY_LENIENT_FROM_TERMS else len(terms)
    kind = _asked_kind(question)
    # "Who …?" asks for a person: a capitalised code ("error code E4") is a later choice.
    person = question.strip().split(maxsplit=1)[0].lower() in PERSON_WH if question.strip() else False
    best: tuple[tuple[int, bool, bool, bool, int, int], str, Sentence] | None = None
    for rank, sentence in enumerate(evidence.ranked()):
        count = len(covered(terms, [sentence]))
        if count < need or count == 0:
            continue
        for name, (untyped, aside, distance) in _names_in(sentence, terms, names_mid, kind):
            coded = person and any(ch.isdigit() for ch in name)
            key = (-count, coded, untyped, aside, distance, rank)
            if best is None or key < best[0]:
                best = (key, name, sentence)
    return (best[1], best[2]) if best else None


def _asked_kind(question: str) -> str:
    """The stem of the noun after an opening "which"/"what" ("Which room …" → room), else ""."""
    words = [w.strip(EDGE).lower() for w in question.split()[:2]]
    if len(words) == 2 and words[0] in ("which", "what"):
        stems = tokenize(words[1])
        return stems[0] if stems else ""
    return ""


def _names_in(
    sentence: Sentence, terms: Sequence[Term], names_mid: set[str], kind: str
) -> Iterator[tuple[str, tuple[bool, bool, int]]]:
    """Candidate names with (not beside the asked-for noun, not in subject position, distance in
    words to a matched word)."""
    unit = sentence.unit
    asked = {stem for term in terms for stem in term.stems}
    if unit.subject and unit.object and len(split_sentences(unit.body)) == 1:
        for side in (unit.subject, unit.object):
            if not set(tokenize(side)) <= asked:
                yield side, (True, side != unit.subject, 0)
        return
    words = sentence.text.split()
    hits = [i for i, w in enumerate(words) if set(tokenize(w.strip(EDGE))) & asked]
    run: list[tuple[int, str]] = []
    capitals = [_is_capital(raw) for raw in words]
    for index, raw in enumerate([*words, ""]):
        word = raw.strip(EDGE).removesuffix("'s").removesuffix("\u2019s")
        # A capitalised first word is a name when the evidence capitalises it mid-sentence too, or
        # the next word continues it ("Tobiah Kell drove …"); else it may be any word ("Inside …").
        first_is_name = word in names_mid or (len(capitals) > 1 and capitals[1] and raw[-1:] not in EDGE)
        if _is_capital(raw) and (index > 0 or first_is_name) and word.lower() not in STOPWORDS:
            run.append((index, word))
            if raw[-1:] not in EDGE:
                continue
        if run and not set(tokenize(" ".join(w for _, w in run))) & asked:
            start, end = run[0][0], run[-1][0]
            distance = min((min(abs(h - start), abs(h - end)) for h in hits), default=len(words))
            subject = (bool(hits) and end < hits[0]) or (start > 0 and words[start - 1].lower() == "by")
            beside = " ".join(words[max(0, start - 2) : start] + words[end + 1 : end + 2])
            typed = bool(kind) and kind in tokenize(beside)
            yield " ".join(w for _, w in run), (not typed, not subject, distance)
        run = []


def _is_capital(raw: str) -> bool:
    word = raw.strip(EDGE)
    return bool(word) and word[:1].isupper() and any(ch.isalpha() for ch in word)


def _mid_sentence_capitals(evidence: Evidence) -> set[str]:
    names = set()
    for sentence in evidence.reading:
        for raw in sentence.text.split()[1:]:
            word = raw.strip(EDGE).removesuffix("'s").removesuffix("\u2019s")
            if word[:1].isupper():
                names.add(word)
    return names


# --- list -----------------------------------------------------------------------------------------


def list_items(terms: Sequence[Term], evidence: Evidence) -> tuple[list[str], list[Sentence]] | None:
    """Items of the best-matching sentence's enumeration ("…: a, b and c"), or the run of ordinal
    sentences ("The first …", "The second …") that follows it."""
    ranked = sorted(enumerate(evidence.ranked()), key=lambda pair: (-len(covered(terms, [pair[1]])), pair[0]))
    for _, sentence in ranked:
        if not covered(terms, [sentence]):
            break
        items = enumeration(sentence.text)
        if items:
            return items, [sentence]
        ordinals = _ordinal_run(sentence, evidence)
        if len(ordinals) >= 2:
            return [s.text.rstrip(".") for s in ordinals], [sentence, *ordinals]
    return None


def _ordinal_run(sentence: Sentence, evidence: Evidence) -> list[Sentence]:
    """Ordinal sentences after `sentence`, each within `_ORDINAL_REACH` sentences of the one
    before it: an item may take a few sentences of explanation before the next begins."""
    _, later = evidence.around(sentence, 0, _ORDINAL_REACH * _MAX_ORDINALS)
    run: list[Sentence] = []
    since = 0
    for follower in later:
        since += 1
        if since > _ORDINAL_REACH:
            break
        if _ORDINAL.match(follower.text):
            run.append(follower)
            since = 0
    return run


def enumeration(text: str) -> list[str]:
    """ "a, b and c" (after a colon when there is one) as its items; [] when there is none."""
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
    two after (text gives a reason on either side of what it explains); none when the sentence
    gives its own reason ("because", "due to", "so that" …)."""
    best = None
    for rank, sentence in enumerate(evidence.ranked()):
        count = len(covered(terms, [sentence]))
        if count and (best is None or (-count, rank) < best[0]):
            best = ((-count, rank), sentence)
    if best is None or 2 * -best[0][0] < len(terms):
        return None
    anchor = best[1]
    if _GIVES_REASON.search(anchor.text):
        # "Presenters log every song, because the station pays royalties on that log": the reason
        # is said; a neighbour sharing a word ("A presenter who misses three shows …") is not it.
        return anchor, []
    earlier, later = evidence.around(anchor, _EXPLANATION_BEFORE, _EXPLANATION_AFTER)
    before = _connected(list(reversed(earlier)), anchor, terms)[::-1]
    return anchor, [*before, *_connected(later, anchor, terms)]


def _connected(outward: Sequence[Sentence], anchor: Sentence, terms: Sequence[Term]) -> list[Sentence]:
    """The neighbours, walking away from the anchor, up to the first that is about something else:
    one that shares no word with the anchor or the question and does not open by referring back
    ("It", "This", "Because", …). A paragraph moves on to other subjects; its next sentence is a
    reason only if it is still about the same thing."""
    kept = []
    for sentence in outward:
        opener = sentence.text.split(maxsplit=1)[0].strip(EDGE).lower() if sentence.text.split() else ""
        if not (sentence.stems & anchor.stems or covered(terms, [sentence]) or opener in REFERS_BACK):
            break
        kept.append(sentence)
    return kept


def quoted_text(unit: KnowledgeUnit, terms: Sequence[Term]) -> str:
    """What a claims answer quotes of a unit: an authored unit's whole body; of a unit cut from
    prose (`SourceLocation.prose`), the sentences naming a question term, each with the
    neighbours an explanation would keep (`_connected`: a referent before it, a continuation
    after it), in text order. Such a unit is a paragraph's next few sentences, cut by count, so
    its other sentences are often about something else ("The bow thruster is powered by the port
    generator" after two sentences about the oil pump). No sentence naming a term: all of it."""
    if unit.location is None or not unit.location.prose or not terms:
        return unit.body
    sentences = Evidence([unit]).by_unit[unit.id]
    anchors = [at for at, sentence in enumerate(sentences) if covered(terms, [sentence])]
    if len(sentences) < 2 or not anchors:
        return unit.body
    kept: set[int] = set()
    for at in anchors:
        anchor = sentences[at]
        before = _connected(sentences[max(0, at - _EXPLANATION_BEFORE) : at][::-1], anchor, terms)
        after = _connected(sentences[at + 1 : at + 1 + _EXPLANATION_AFTER], anchor, terms)
        kept.update(range(at - len(before), at + len(after) + 1))
    return " ".join(sentences[at].text for at in sorted(kept))


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


def form_draft(
    form: Form, asked: Question, units: Sequence[KnowledgeUnit], paragraphs: Sequence[KnowledgeUnit] = ()
) -> Draft | None:
    """The answer in the form asked for, or None when the evidence has no such shape (the caller
    then quotes the evidence as before). Lists and explanations also read the rest of the kept
    units' paragraphs (`paragraphs`, ranked after every kept unit): an enumeration or a reason
    runs on past the unit retrieval kept."""
    reads_on = form in (Form.LIST, Form.EXPLANATION)
    evidence = Evidence([*units, *paragraphs] if reads_on else units)
    question, terms = asked.text, asked.terms
    if form is Form.YES_NO:
        return _yes_no_draft(asked, evidence)
    if form is Form.ENTITY:
        found = entity(question, terms, evidence)
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
        return replace(_draft(lead, reasons, method), cited=_ids([anchor, *reasons]))
    if form is Form.COMPARISON:
        return _comparison_draft(asked.cues, evidence)
    return None


def _draft(lead: str, because: Sequence[Sentence], method: str) -> Draft:
    return Draft.led(lead, " ".join(s.cited() for s in because), _ids(because), method)


_UNNAMED = "no kept evidence mentions it"


def _unended(sentence: Sentence) -> str:
    """The sentence cited without its final stop, to stand beside another in one line."""
    return sentence.cited().removesuffix(".")


def _ids(sentences: Sequence[Sentence]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.unit.id for s in sentences))


def _yes_no_draft(question: Question, evidence: Evidence) -> Draft:
    from core.answer.polarity import yes_no  # its patterns compile only for yes/no questions

    verdict = yes_no(question, evidence)
    decided = f": {verdict.decision.reason}" if verdict.decision else ""
    if verdict.answer is not None:
        return _draft(
            verdict.answer, verdict.because, f"yes/no from the polarity of {verdict.because[-1].unit.id}{decided}"
        )
    closest = f" The closest evidence says: {' '.join(s.cited() for s in verdict.because)}" if verdict.because else ""
    terms = question.terms
    missing = [t.word for t in terms if t not in covered(terms, verdict.because)]
    reason = (
        verdict.decision.reason
        if verdict.decision
        else f"no passage states or denies it (unmatched: {', '.join(missing) or 'none'})"
    )
    return Draft(
        f'cannot tell from the evidence whether the answer to "{quoted_question(question.text.split("?")[0])}" is yes or no.{closest}',
        _ids(verdict.because),
        f"yes/no: {reason}",
        cannot_tell=reason,
    )


def _comparison_draft(cues: QuestionCues, evidence: Evidence) -> Draft | None:
    """Asked to compare, the contrast on the first line, each side's first sentence ("ingots: The
    ingots were insured [id]; ledger: The ledger was a different matter [id]."): that is what sets
    the sides apart. Then what names every side, then each side's further sentences. Offered
    alternatives ("Is X or Y older?"), what names every side comes first: it is what decides
    between them. A side nothing names says so."""
    both, sides = comparison(cues.compared, evidence)
    if not both and not any(sentences for _, sentences in sides):
        return None
    lines = [" ".join(s.cited() for s in both)] if both else []
    if cues.act_cue == ALTERNATIVES:
        lines += [
            f"{name}: {' '.join(s.cited() for s in sentences) if sentences else _UNNAMED + '.'}"
            for name, sentences in sides
            if sentences or not both
        ]
    else:
        heads = [
            f"{name}: {_unended(sentences[0]) if sentences else _UNNAMED}"
            for name, sentences in sides
            if sentences or not both
        ]
        lines[:0] = [f"{'; '.join(heads)}."] if any(sentences for _, sentences in sides) else []
        lines += [f"{name}: {' '.join(s.cited() for s in sentences[1:])}" for name, sentences in sides if sentences[1:]]
    cited = _ids([*both, *(s for _, sentences in sides for s in sentences)])
    return Draft("\n".join(lines), cited, f"compared {' / '.join(cues.compared)} sentence by sentence")
