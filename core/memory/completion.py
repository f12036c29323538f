"""Completing a follow-up from the conversation: the rewriting `core.memory.followup.resolve` does
once a question has records, or earlier questions of its input, to be completed from. A module of
its own so that a question with neither never imports the mention finder (core/memory/mentions.py:
coreference, the plain-text reader, people; issue 41).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.memory.followup_cues import ELLIPSIS, SAME, WHY, Candidate, Resolution, pronoun_groups
from core.memory.mentions import TurnText, mentions_of
from core.memory.referents import choose, rewrite
from core.nlp.tagging import tag_text
from core.text.words import DO_FORMS, FRAME_AUXILIARIES, WH_WORDS

# Word classes no bare verb is tagged as: closed classes and punctuation.
_NEVER_A_VERB = frozenset({"PUNCT", "PART", "DET", "ADP", "PRON", "CCONJ", "SCONJ", "NUM", "SYM", "X"})
# Turns a pronoun is looked for in: CoQA's follow-ups point one or two turns back.
RECENT_TURNS = 2


def complete(question: str, usable: Sequence[Candidate], before: Sequence[str]) -> Resolution:
    """`question` with what it leaves out filled in from `usable` (the records at or above the
    memory's minimum score) and `before` (the questions asked earlier in the same input)."""
    ellipsis = ELLIPSIS.match(question)
    if ellipsis and usable:
        return _ellipsis(question, ellipsis.group("what"), usable)
    if WHY.match(question) and usable:
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
    same = SAME.search(rewritten)
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
    if not _subject_keeps_its_verb(base.question, start, start + len(slot)):
        return Resolution(
            question,
            unresolved=(
                f"{question.strip()} left as asked: {slot!r} in turn {base.turn}'s question is no noun phrase there "
                "(it takes the verb its do-question needs)",
            ),
        )
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
    found = same or kind
    return found[0].text if found else None


def _subject_keeps_its_verb(frame: str, start: int, end: int) -> bool:
    """Whether the phrase at frame[start:end], read as a noun phrase, leaves the frame its grammar.
    A do-question's subject stands between the auxiliary and the bare verb ("What does the machine
    use?"): a phrase right after the auxiliary that no word able to be that verb follows has taken
    the verb in ("the machine use", as the tagger reads it). The tagger may call the verb itself a
    noun or adjective ("Did the dog bark?"), so only the closed classes rule a word out."""
    tokens = tag_text(frame)
    before = [t for t in tokens if t.end <= start and t.tag != "PART"]  # "didn't the man go?"
    if not before or before[-1].word.lower() not in DO_FORMS:
        return True
    after = [t for t in tokens if t.start >= end and t.tag != "ADV" and t.word.lower() != "not"]
    return bool(after) and after[0].tag not in _NEVER_A_VERB


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
