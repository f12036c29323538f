"""Follow-up questions: what a question leaves out ("she", "their", "the same fee", "And Helix?",
"Why?") is completed from the conversation, and the intent says so, or says why it was not.

    "Who maintains it?"     + record about Orion       → "Who maintains Orion?"
    "And Helix?"            + "Who maintains Orion?"   → "Who maintains Helix?"
    "Do juniors pay the same fee?" + "How much is the annual fee?" → "Do juniors pay the annual fee?"

A pronoun is replaced only by a mention that agrees with it and is likely enough
(core/memory/referents.py); "the same X" only by an earlier X; an elliptical follow-up reuses the
last question's frame only when that frame is complete (it has no pronoun left unresolved, and a
slot of X's kind). Only the caller's own records are offered (core/memory/conversation.py), already
scored; a record below `minScore` is never used. Nothing is guessed when no record qualifies.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.memory.mentions import TurnText, mentions_of
from core.memory.referents import choose, pronoun_groups, rewrite
from core.nlp.tagging import tag_text
from core.text.words import FRAME_AUXILIARIES, WH_WORDS

_ELLIPSIS = re.compile(r"^\s*(?:and|what about|how about)\s+(?P<what>[^?]+?)\s*\??\s*$", re.IGNORECASE)
_SAME = re.compile(r"\bthe same(?:\s+(?P<what>\w+))?\b", re.IGNORECASE)
_WHY = re.compile(r"^\s*why\s*\??\s*$", re.IGNORECASE)
# Turns a pronoun is looked for in: CoQA's follow-ups point one or two turns back.
RECENT_TURNS = 2


@dataclass(frozen=True)
class Candidate:
    """A scored memory record as a follow-up sees it."""

    id: str
    turn: int
    question: str
    lead: str
    entity: str
    score: float
    # The text of the units its answer cited that the run's view shows (sd-symbolic reads them
    # from its own view: a unit the caller cannot see is never read), and of their whole files.
    story: tuple[str, ...] = ()
    document: str = ""


@dataclass(frozen=True)
class Resolution:
    question: str
    notes: tuple[str, ...] = ()
    used: tuple[str, ...] = ()
    # Why a pronoun was left as asked: "could not tell who 'she' is: Anna or her mother …".
    unresolved: tuple[str, ...] = ()


def refers_back(question: str) -> bool:
    """The question leaves something to the conversation: a third-person pronoun, an elliptical
    frame ("And X?", "What about X?"), a bare "Why?" or "the same X". A question with none of
    these, and with a verb of its own, stands alone whatever was asked before it; one without a
    verb ("On what date?", "How many?") is a fragment of the conversation."""
    if pronoun_groups(question) or _ELLIPSIS.match(question) or _WHY.match(question) or _SAME.search(question):
        return True
    return not any(t.tag in ("VERB", "AUX") for t in tag_text(question))


def resolve(question: str, candidates: Sequence[Candidate], min_score: float, before: Sequence[str] = ()) -> Resolution:
    """`question` with what it leaves out filled in from the candidates at or above `min_score`;
    `before`: the questions asked earlier in the same input ("Why was X …? What made him …?")."""
    usable = [c for c in candidates if c.score >= min_score]
    if not usable and not before:
        return Resolution(question)
    ellipsis = _ELLIPSIS.match(question)
    if ellipsis and usable:
        return _ellipsis(question, ellipsis.group("what"), usable)
    if _WHY.match(question) and usable:
        return _why(question, usable)
    rewritten, notes, used, unresolved = question, [], [], []
    if pronoun_groups(question):
        within = mentions_of([TurnText(0, " ".join(before))]) if before else []
        texts = _turn_texts(usable)
        document = texts[0].document if texts else ""
        # Where the last turn stands in the story: its lead's sentence, or (it abstained) the one
        # its question's words point at.
        answer = f"{texts[0].lead} {texts[0].question}" if texts else ""
        choices = choose(question, mentions_of(texts), before=within, document=document, answer=answer)
        rewritten = rewrite(question, choices)
        latest = max(usable, key=lambda c: c.turn, default=None)
        for choice in choices:
            if choice.chosen is None:
                unresolved.append(choice.note())
            elif not choice.weights:
                notes.append(choice.note())
            elif latest is not None:
                turn = latest.turn - choice.chosen.back
                source = next((c for c in usable if c.turn == turn), latest)
                notes.append(f"{choice.note()}, from turn {turn}, memory score {source.score:.2f}")
                used.append(source.id)
    same = _SAME.search(rewritten)
    if same and same.group("what") and usable:
        filled = _same(same.group("what"), usable)
        if filled is not None:
            text, source = filled
            rewritten = rewritten[: same.start()] + text + rewritten[same.end() :]
            notes.append(
                f"{same.group(0)} → {text}, an earlier {same.group('what')}, from turn {source.turn}, "
                f"memory score {source.score:.2f}"
            )
            used.append(source.id)
    return Resolution(rewritten, tuple(notes), tuple(dict.fromkeys(used)), tuple(unresolved))


def _turn_texts(usable: Sequence[Candidate]) -> list[TurnText]:
    """The latest turns' questions, leads and (the latest turn's) cited text."""
    turns = sorted({c.turn: c for c in usable if c.turn > 0}.values(), key=lambda c: -c.turn)[:RECENT_TURNS]
    latest = turns[0].turn if turns else 0
    return [
        TurnText(
            latest - c.turn,
            c.question,
            c.lead,
            entity=c.entity,
            story=c.story if c.turn == latest else (),
            document=c.document if c.turn == latest else "",
        )
        for c in turns
    ]


def _same(what: str, usable: Sequence[Candidate]) -> tuple[str, Candidate] | None:
    """The latest earlier mention whose noun is `what` ("the same fee": "the annual membership fee")."""
    head = what.lower()
    for candidate in sorted(usable, key=lambda c: -c.turn):
        for mention in mentions_of([TurnText(0, candidate.question, candidate.lead)]):
            if mention.head == head or _lemma(mention.head) == _lemma(head):
                return mention.text, candidate
    return None


def _lemma(word: str) -> str:
    from core.nlp import lexicon_or_none

    lexicon = lexicon_or_none()
    return lexicon.lemma(word, "NOUN") if lexicon is not None else word


def _ellipsis(question: str, what: str, usable: Sequence[Candidate]) -> Resolution:
    """ "And X?": the last question asked again about X in place of the earlier mention of X's kind
    (a fee for a fee, a person for a person); left as asked when that question still holds a
    pronoun it could not resolve (its frame is incomplete) or has no slot of X's kind."""
    if not _noun_phrase(what):
        return Resolution(question)  # "And what should X not get close to?" is a question of its own
    base = max(usable, key=lambda c: c.turn)
    if pronoun_groups(base.question):
        return Resolution(
            question,
            unresolved=(
                f'{question.strip()} left as asked: turn {base.turn}\'s question "{base.question}" still has a pronoun',
            ),
        )
    slot = _slot(base.question, what, base.entity)
    if slot is None:
        return Resolution(
            question,
            unresolved=(
                f"{question.strip()} left as asked: turn {base.turn}'s question has no {what.strip()}-like slot",
            ),
        )
    start = base.question.index(slot)
    rewritten = base.question[:start] + what + base.question[start + len(slot) :]
    note = f"{question.strip()} → {rewritten}, from turn {base.turn}, memory score {base.score:.2f}"
    return Resolution(rewritten, (note,), (base.id,))


def _noun_phrase(what: str) -> bool:
    """ "And the swarm fee?", "What about Petrel?": the rest is a noun phrase, not a clause ("what
    should X not get close to") nor a place phrase ("to the south", whose frame English cannot say)."""
    tags = [t.tag for t in tag_text(what)]
    return (
        bool(tags)
        and tags[0] not in ("ADP", "ADV", "SCONJ")
        and not {"VERB", "AUX"} & set(tags)
        and what.split()[0].lower() not in WH_WORDS
    )


def _slot(frame: str, what: str, entity: str) -> str | None:
    """The mention of `frame` that `what` takes the place of: the same noun, else the same kind
    (what the frame asked about counts as a mention even where the tagger missed it: "What is
    Tern?" reads Tern as an adjective)."""
    own = mentions_of([TurnText(0, what)])
    theirs = [m for m in mentions_of([TurnText(0, frame, entity=entity)]) if m.text in frame]
    if not own or not theirs:
        return None
    mine = own[-1]
    same = [m for m in theirs if m.head == mine.head or _lemma(m.head) == _lemma(mine.head)]
    kind = [m for m in theirs if m.kind == mine.kind and m.named == mine.named]
    return (same or kind or [None])[0].text if (same or kind) else None


def _why(question: str, usable: Sequence[Candidate]) -> Resolution:
    """ "Why?" after a yes/no question ("Did Anna go home?") asks why of that question's claim."""
    base = max(usable, key=lambda c: c.turn)
    first = base.question.split(maxsplit=1)
    if len(first) < 2 or first[0].lower() not in FRAME_AUXILIARIES or pronoun_groups(base.question):
        return Resolution(question)
    rewritten = f"Why {first[0].lower()} {first[1]}"
    return Resolution(
        rewritten,
        (f"{question.strip()} → {rewritten}, from turn {base.turn}, memory score {base.score:.2f}",),
        (base.id,),
    )
