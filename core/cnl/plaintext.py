"""Plain text (`.txt`, `.nl`) → knowledge units, deterministically.

The rules, in order:
- A trailing question block is dropped: it lists what the text should answer, not evidence.
  A bare `Questions`, `Questions:` or `## Questions` line (any case) drops everything after it.
  Any other short heading line with the word "question(s)" in its first three words ("Questions
  — answer each with one word:", "Questions for the reader", "Review questions.") drops what follows only when every
  later non-blank line reads as a question (`Q3:`, `3.`, `3)`, a bullet, or a `?` in the line),
  at least half of them ask (`?` or `Q3:`), and the heading starts a paragraph: in prose such a
  line is prose. Without such a heading, two or more last lines that each carry a list label
  (`Q3:`, `Q-3.`, `3.`, `(c)`, `c)`, `[3]`, a bullet), at least half of them asking, are a block
  too when a blank line or a title-shaped line (short, no final `.`/`!`/`?`, starting a
  paragraph) stands above them. `question_block` (core/cnl/question_block.py) gives where the block starts.
- Paragraphs are separated by blank lines; a Markdown `#` heading line is a paragraph of its own
  even without blank lines around it, and so is a paragraph's first line when it is written as a
  heading straight above the text (at most 8 words from a capital or digit, no final `.`, `!`,
  `?`, `,` or `;`, not ending on "the", "and", "of" …, not a fact; the next line starts with a
  capital). A paragraph that is one `#` heading line, or one
  short line (at most 10 words) without final punctuation that is not a fact, is a heading: it
  becomes no unit but the Title of the units after it.
- Ids are stable: a unit's id is `<source>::chunk-HHHHHHHH::unit-NNN`, where HHHHHHHH are 8
  digits of a hash of the unit's own text, normalised (case-folded, only its words kept), and NNN
  counts units of the file with the same digits (000 for the first, 001 for a repeated text,
  ...). Inserting, deleting or moving another paragraph, re-wrapping lines or changing
  punctuation keeps every other id; editing a unit's words gives it a new id.
- A paragraph that is a numbered list from 1 (`1.` or `1)`, 2 to 20 items, wrapped lines joining
  their item) is one Procedure unit: its steps as written, topic = the heading above, else the
  first step's first words; unless most items open with an article or pronoun ("1. The mill
  went to …"): those are statements, read as sentences.
- An FAQ entry (`Q:`/`Question:` lines, then `A:`/`Answer:` lines, in one paragraph or two) is
  read as its answer, with the question as the units' topic; its question is not evidence.
- Sentences end at `.`, `!` or `?` (with any closing quotes or brackets) before whitespace and a
  character that is not lowercase, except after a known abbreviation or an initial (`e.g.`,
  `Dr.`, `J.`, `U.S.`); a line starting with a bullet (`-`, `*`, `1.`) also starts a sentence.
- A sentence of the form "X <verb> Y" from `_FACT_VERBS` is a fact: one unit with that triple,
  confidence 0.9, role Explanation, topic "X and Y" and the sentence as claim. X and Y must be
  short noun phrases (at most 8 words, no comma, no clause word such as "that" or "because",
  no pronoun as X); leading articles and trailing adverbs of X ("also", "directly") are removed.
  "helps with" maps to relevant_for (the DS004 built-in set has no "helps" relation and the
  sentence claims usefulness for a goal); "enables" maps to supports; "leads to" to causes.
  Beyond the DESIGN list, "is" patterns also accept "are", every verb its plural form ("Pumps
  provide pressure", "Storms cause floods"), and "relevant/useful to" and
  "has capability to" are accepted as the common variants of "for" and "of".
- Consecutive non-fact sentences of one paragraph, up to three, form one unit: role Explanation
  when one of them has an explanatory connective ("because", "therefore", ...), else Narrative;
  topic = the heading above, else up to eight words of one sentence, from the first word with a
  letter or digit.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from pathlib import PurePath

from pydantic import ValidationError

from core.cnl.permission_finding import HEADING_OVER_VALUE, LabelFinding
from core.cnl.permission_inline import (
    header_label,
    permission_across,
    permission_inline,
)
from core.cnl.permission_tables import TABLE_ROWS, header_row, pair_row
from core.cnl.permissions import permission_after_lead, permission_line, unread_message
from core.cnl.plain_facts import fact_triple
from core.cnl.plain_sentences import sentences_of, split_paragraphs
from core.cnl.question_block import ANSWER_LABEL, evidence_lines
from core.cnl.source_text import Token, source_lines
from core.cnl.validate import FIELD_LABELS, UnitDraft, split_id
from core.infra.diagnostics import Code, Diagnostic
from core.text.words import STATEMENT_OPENERS
from core.units import KnowledgeUnit, Relation, Role

FACT_CONFIDENCE = "0.9"
# A unit to build: the (line, col) it starts at and its fields by Markdown name.
_Unit = tuple[tuple[int, int], dict[str, str]]
_MAX_NARRATIVE_SENTENCES = 3
_TOPIC_WORDS = 8

_NUMBERED = re.compile(r"\s*(\d{1,3})[.)]\s+(?=\S)")
_MAX_STEPS = 20
# The model's key of each field the reader writes.
_KEYS = {label: key for key, label in FIELD_LABELS.items()}
# A question-and-answer pair (an FAQ): "Q:" / "Question:" lines, then "A:" / "Answer:" lines.
_QUESTION_LABEL = re.compile(r"\s*(?:q|question)\s*\d*\s*:[ \t]*(?=\S)", re.IGNORECASE)
_CONNECTIVES = re.compile(
    r"\b(?:because|therefore|thus|hence|due to|so that|as a result|which means|in order to|consequently)\b",
    re.IGNORECASE,
)


def read_plaintext(text: str, file: str) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    source = slugify(PurePath(file).stem)
    units: list[KnowledgeUnit] = []
    diagnostics, flagged, inline = _permission_lines(text, file)
    heading: str | None = None
    used: Counter[int] = Counter()
    if flagged - inline:
        # A label at a line start (`Acl: staff`, `Audience: staff`, `Acl staff` over the text) in a
        # file that has no fields was meant for the file: nothing of it is served.
        return [], diagnostics
    for paragraph, asked in _question_pairs(split_paragraphs(evidence_lines(text))):
        if flagged and any(number in flagged for number, _ in paragraph):
            continue  # a field written inside a sentence withdraws its paragraph
        sentences = sentences_of(paragraph)
        title = _heading(paragraph, sentences) if asked is None else None
        if title is not None:
            heading = title
            continue
        steps = _steps(paragraph) if asked is None else None
        units_of = [_procedure(paragraph, steps, heading)] if steps else _chunk_units(sentences, heading, asked)
        for unit_id_at, fields in units_of:
            digits = text_digits(fields.get("Claim") or fields["Procedure"])
            unit_id = f"{source}::chunk-{digits:08d}::unit-{used[digits]:03d}"
            used[digits] += 1
            unit, problems = _built(Token(unit_id, *unit_id_at), fields, file)
            diagnostics.extend(problems)
            if unit is not None:
                units.append(unit)
    return units, diagnostics


def _built(unit_id: Token, fields: dict[str, str], file: str) -> tuple[KnowledgeUnit | None, list[Diagnostic]]:
    """The unit of `fields` (Markdown names, values the reader wrote itself: a canonical role and
    relation, no permission field, an id of the schema's shape), validated by the model at once;
    only fields the model refuses go through the field-by-field draft, which says why at the
    line. The draft's per-field parsing was three quarters of reading dense facts."""
    data: dict[str, object] = {_KEYS[name]: value.strip() for name, value in fields.items() if value.strip()}
    source, chunk = split_id(unit_id.text)
    data.update(
        id=unit_id.text,
        source_id=source,
        chunk_id=chunk,
        location={"file": file, "line": unit_id.line, "col": unit_id.col, "prose": True},
    )
    try:
        return KnowledgeUnit.model_validate(data), []
    except ValidationError:
        draft = UnitDraft(unit_id, file, prose=True)
        for name, value in fields.items():
            draft.add_text(Token(name, unit_id.line, unit_id.col), [Token(value, unit_id.line, unit_id.col)])
        return draft.build()


def _permission_lines(text: str, file: str) -> tuple[list[Diagnostic], frozenset[int], frozenset[int]]:
    """An error for each line with a permission label at its start (`Acl: staff`), or one written
    inside it (`Note — acl: staff`): plain text has no fields, so the file is withdrawn for the
    first (it was meant for the file) and the paragraph holding the second (fail closed)."""
    diagnostics = []
    inline = set()  # lines whose field sits inside prose: they withdraw their paragraph, not the file
    lines = source_lines(text)
    for number, (line, after) in enumerate(zip(lines, [*lines[1:], ""]), start=1):
        header = header_row(line, after, lines[number + 1 : number + 1 + TABLE_ROWS])
        if header:
            found = header_label(line)  # `Region<TAB>Population` over rows of values names a column
        else:
            found = permission_line(line) or _after_lead(line)
        if found is None and not header and (found := permission_inline(line)) is not None:
            inline.add(number)
        if found is None and not header and after.strip() and (found := permission_across(line, after)) is not None:
            # A label split over two lines (`Acl` / `: staff`): at a line start, meant for the file.
            if permission_line(f"{line.rstrip()} {after.lstrip()}") is None and found.reason != HEADING_OVER_VALUE:
                inline.add(number)
        if found is not None:
            withdrawn = "its paragraph is" if number in inline else "every unit of this file is"
            message = unread_message(
                found.name,
                found.label,
                "in plain text, which has no fields",
                pair_row=pair_row(line),
                reason=found.reason,
            )
            diagnostics.append(
                Diagnostic(
                    code=Code.PERMISSION_NOT_READ,
                    message=message.replace("the unit is", withdrawn),
                    file=file,
                    line=number,
                    col=found.column,
                    author_only=True,
                )
            )
    return diagnostics, frozenset(d.line for d in diagnostics), frozenset(inline)


def _after_lead(line: str) -> LabelFinding | None:
    """A label after a leading token (`Note: Region: EU`): a line of its own, meant for the file."""
    if line.isascii() and ":" not in line and "=" not in line and "\t" not in line and " -" not in line:
        return None
    return permission_after_lead(line)


def text_digits(text: str) -> int:
    """8 decimal digits of a hash of `text`'s words (case-folded), the stable part of an id."""
    words = " ".join(re.findall(r"\w+", text.casefold()))
    digest = hashlib.blake2b(words.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % 10**8


def slugify(name: str) -> str:
    """A source id from a file name: ASCII lowercase words joined by '-'."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_name.lower()).strip("-") or "text"


def _question_pairs(paragraphs: Iterator[list[tuple[int, str]]]) -> Iterator[tuple[list[tuple[int, str]], str | None]]:
    """Each paragraph with the question it answers, if it is an FAQ answer: a paragraph opening
    with `Q:` lines and going on with `A:` lines (or a `Q:` paragraph and an `A:` paragraph after
    it) is its answer's lines, labels blanked out (columns kept), with the question's text. An
    FAQ's question is not evidence: quoted, "Can I keep chickens?" read as a claim."""
    pending: list[tuple[int, str]] | None = None  # a question paragraph waiting for its answer
    for paragraph in paragraphs:
        if pending is not None:
            if ANSWER_LABEL.match(paragraph[0][1]):
                yield _answer(pending + paragraph, len(pending))
                pending = None
                continue
            yield pending, None
            pending = None
        if not _QUESTION_LABEL.match(paragraph[0][1]):
            yield paragraph, None
            continue
        answer_at = next((i for i, (_, line) in enumerate(paragraph) if i and ANSWER_LABEL.match(line)), None)
        if answer_at is None:
            pending = paragraph
        else:
            yield _answer(paragraph, answer_at)
    if pending is not None:
        yield pending, None


def _answer(lines: list[tuple[int, str]], answer_at: int) -> tuple[list[tuple[int, str]], str]:
    question = " ".join(
        _QUESTION_LABEL.sub("", line, count=1).strip() if i == 0 else line.strip()
        for i, (_, line) in enumerate(lines[:answer_at])
    )
    number, first = lines[answer_at]
    label = ANSWER_LABEL.match(first)
    assert label is not None
    answer = [(number, " " * label.end() + first[label.end() :]), *lines[answer_at + 1 :]]
    return answer, question


def _heading(paragraph: list[tuple[int, str]], sentences: list[Token]) -> str | None:
    if len(paragraph) != 1:
        return None
    line = paragraph[0][1].strip()
    if line.startswith("#"):
        return line.lstrip("#").strip().rstrip(":").strip()
    if line[-1] in ".!?" or len(line.split()) > 10 or any(fact_triple(s.text) for s in sentences):
        return None
    return line.rstrip(":").strip()


def _steps(paragraph: list[tuple[int, str]]) -> list[str] | None:
    """The items of a paragraph that is a numbered list from 1 (`1.` or `1)`, each item's wrapped
    lines joined to it), or None. At most `_MAX_STEPS` items: a longer list is read as sentences."""
    items: list[str] = []
    for _, line in paragraph:
        marker = _NUMBERED.match(line)
        if marker is not None:
            if int(marker.group(1)) != len(items) + 1:
                return None
            items.append(line[marker.end() :].strip())
        elif items:
            items[-1] += " " + line.strip()
        else:
            return None
    if not 2 <= len(items) <= _MAX_STEPS:
        return None
    # "1. The mill went to the Fenwicks. 2. The bridge …" lists statements, not steps to take.
    statements = sum(1 for item in items if item.split(maxsplit=1)[0].lower().strip(",:") in STATEMENT_OPENERS)
    return None if 2 * statements > len(items) else items


def _procedure(paragraph: list[tuple[int, str]], steps: list[str], heading: str | None) -> _Unit:
    """A numbered list is a procedure: one unit, its steps numbered as written."""
    body = "\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))
    fields = {
        "Role": Role.PROCEDURE.value,
        "Topic": heading or " ".join(steps[0].split()[:_TOPIC_WORDS]).rstrip(".,;:!?"),
        "Procedure": body,
    }
    number, line = paragraph[0]
    return (number, len(line) - len(line.lstrip()) + 1), _with_title(fields, heading)


def _chunk_units(sentences: list[Token], heading: str | None, asked: str | None = None) -> Iterator[_Unit]:
    """(position, fields) of each unit of one paragraph, in order; an FAQ answer's narrative
    units take the question they answer (`asked`) as their topic."""
    run: list[Token] = []
    for sentence in sentences:
        triple = fact_triple(sentence.text)
        if triple is None:
            run.append(sentence)
            if len(run) == _MAX_NARRATIVE_SENTENCES:
                yield _narrative(run, heading, asked)
                run = []
            continue
        if run:
            yield _narrative(run, heading, asked)
            run = []
        yield _fact(sentence, triple, heading)
    if run:
        yield _narrative(run, heading, asked)


def _fact(sentence: Token, triple: tuple[str, Relation, str], heading: str | None) -> _Unit:
    subject, relation, obj = triple
    fields = {
        "Role": Role.EXPLANATION.value,
        "Topic": f"{subject} and {obj}",
        "Claim": sentence.text,
        "Subject": subject,
        "Relation": relation.value,
        "Object": obj,
        "Confidence": FACT_CONFIDENCE,
    }
    return (sentence.line, sentence.col), _with_title(fields, heading)


def _narrative(run: list[Token], heading: str | None, asked: str | None = None) -> _Unit:
    claim = " ".join(sentence.text for sentence in run)
    role = Role.EXPLANATION if _CONNECTIVES.search(claim) else Role.NARRATIVE
    fields = {"Role": role.value, "Topic": asked or heading or _topic(run), "Claim": claim}
    return (run[0].line, run[0].col), _with_title(fields, heading)


def _topic(run: list[Token]) -> str:
    """The first words of the first sentence, skipping sentences and leading words that are only
    punctuation: "... The scheduler restarts." would otherwise get an empty topic and be dropped."""
    for sentence in run:
        words = sentence.text.split()
        start = next((i for i, word in enumerate(words) if any(ch.isalnum() for ch in word)), None)
        if start is not None:
            return " ".join(words[start : start + _TOPIC_WORDS]).rstrip(".,;:!?")
    # No letter or digit anywhere: the first words are all there is.
    return " ".join(run[0].text.split()[:_TOPIC_WORDS]).rstrip(".,;:!?")


def _with_title(fields: dict[str, str], heading: str | None) -> dict[str, str]:
    return {**fields, "Title": heading} if heading else fields
