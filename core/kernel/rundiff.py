"""Two runs compared row by row: what the run diff shows and copies.

A pure function of two event lists, so a live run, a re-run and a replayed trace diff alike.
Each section (request, plan, attempts, evidence, answer) becomes rows that pair one fact of the
left run with the same fact of the right run: the screen draws each pair as one row, so both
sides stay level however long either text is. Facts are paired by what they are about (a plan
stage, a plugin's attempt, a unit id), never by position, so one extra attempt does not shift
everything after it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from itertools import zip_longest
from typing import Literal

from core.kernel.candidates import CandidateScore
from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    Backtracked,
    IntentDetected,
    Intervened,
    PlanBuilt,
    RetrievalScored,
    RunFinished,
    RunStarted,
)

Change = Literal["same", "changed", "added", "removed", "replaced"]
SECTIONS = ("Request", "Plan", "Attempts", "Evidence", "Answer")
MARKS: dict[str, str] = {"same": " ", "changed": "~", "added": "+", "removed": "-", "replaced": "±"}
BACKTRACKS = {1: ("↩", "next candidate"), 2: ("⟲", "replan"), 3: ("≈", "weak answer")}
# Scores are shown to three decimals; a smaller move is not a change anyone can see.
SCORE_STEP = 0.0005
# Below this share of words in common two texts are different texts: marking every word says nothing.
WORDS_ALIKE = 0.4
_TOKENS = re.compile(r"\s+|[^\s]+")

Span = tuple[int, int]


@dataclass(frozen=True)
class DiffRow:
    """One fact of each run, side by side. An empty side means the fact is not in that run.

    `change`: "same"; "changed" (the same fact, a different value); "added" (right only);
    "removed" (left only); "replaced" (different facts at the same place: left gone, right new).
    `note` says what moved in words ("↑2 · score +0.120", "new", "dropped (cut: gap)").
    """

    section: str
    left: str
    right: str
    change: Change
    note: str = ""
    # Character spans of the words that differ, for a changed row whose two texts are alike.
    left_words: tuple[Span, ...] = field(default=(), compare=False)
    right_words: tuple[Span, ...] = field(default=(), compare=False)

    @property
    def changed(self) -> bool:
        return self.change != "same"

    def side(self, which: Literal["left", "right"]) -> str:
        """How one side's cell reads the row: "same", "changed", "added", "removed" or "empty"."""
        text = self.left if which == "left" else self.right
        if not text:
            return "empty"
        if self.change == "replaced":
            return "removed" if which == "left" else "added"
        return self.change


@dataclass(frozen=True)
class RunDiff:
    """Two runs side by side, one row per fact, by section."""

    rows: tuple[DiffRow, ...]

    @property
    def changes(self) -> int:
        """How many rows differ."""
        return sum(row.changed for row in self.rows)

    def section(self, name: str) -> tuple[DiffRow, ...]:
        return tuple(row for row in self.rows if row.section == name)

    def plain(self) -> str:
        """The diff as text: `  same`, `- left` and `+ right` lines under `## Section` headings."""
        lines: list[str] = []
        for name in SECTIONS:
            lines.append(f"## {name}")
            for row in self.section(name):
                note = f"  ({row.note})" if row.note else ""
                if not row.changed:
                    lines.append(f"  {row.left}")
                    continue
                if row.left:
                    lines.append(f"- {row.left}" + ("" if row.right else note))
                if row.right:
                    lines.append(f"+ {row.right}{note}")
        return "\n".join(lines)


def changed_words(left: str, right: str) -> tuple[tuple[Span, ...], tuple[Span, ...]]:
    """The spans of the words each text has that the other lacks (a word diff), or none when the
    texts share too little for word marks to help."""
    a, b = _TOKENS.findall(left), _TOKENS.findall(right)
    matcher = SequenceMatcher(a=a, b=b, autojunk=False)
    if matcher.ratio() < WORDS_ALIKE:
        return (), ()
    starts_a, starts_b = _offsets(a), _offsets(b)
    spans_a: list[Span] = []
    spans_b: list[Span] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1 and not "".join(a[i1:i2]).isspace():
            spans_a.append((starts_a[i1], starts_a[i2]))
        if j2 > j1 and not "".join(b[j1:j2]).isspace():
            spans_b.append((starts_b[j1], starts_b[j2]))
    return tuple(spans_a), tuple(spans_b)


def _offsets(tokens: Sequence[str]) -> list[int]:
    """Where each token starts, plus the end."""
    offsets = [0]
    for token in tokens:
        offsets.append(offsets[-1] + len(token))
    return offsets


def _changed(section: str, left: str, right: str, note: str = "") -> DiffRow:
    left_words, right_words = changed_words(left, right)
    return DiffRow(section, left, right, "changed", note, left_words, right_words)


@dataclass(frozen=True)
class _Fact:
    """One line of a run's section, with the key it is paired by."""

    key: tuple[object, ...]
    text: str


def _pair(section: str, left: Sequence[_Fact], right: Sequence[_Fact]) -> list[DiffRow]:
    """Facts with the same key side by side, in the right run's order, whatever order the left run
    had them in. A fact only the left run has comes after the shared fact it followed there; left-only
    and right-only facts between the same two shared ones share rows, as a split diff does."""
    left_by_key = {fact.key: fact for fact in left}
    right_keys = {fact.key for fact in right}
    gone: dict[tuple[object, ...] | None, list[_Fact]] = {}  # left-only facts, by the shared fact before them
    anchor: tuple[object, ...] | None = None
    for fact in left:
        if fact.key in right_keys:
            anchor = fact.key
        else:
            gone.setdefault(anchor, []).append(fact)
    rows: list[DiffRow] = []
    new: list[_Fact] = []
    anchor = None
    for fact in right:
        if fact.key not in left_by_key:
            new.append(fact)
            continue
        rows += _unmatched(section, gone.pop(anchor, []), new)
        new = []
        before = left_by_key[fact.key]
        same = before.text == fact.text
        rows.append(
            DiffRow(section, before.text, fact.text, "same") if same else _changed(section, before.text, fact.text)
        )
        anchor = fact.key
    return rows + _unmatched(section, gone.pop(anchor, []), new)


def _unmatched(section: str, gone: Sequence[_Fact], new: Sequence[_Fact]) -> list[DiffRow]:
    rows: list[DiffRow] = []
    for a, b in zip_longest(gone, new):
        change: Change = "replaced" if a and b else ("removed" if a else "added")
        rows.append(DiffRow(section, a.text if a else "", b.text if b else "", change))
    return rows


def _unique(facts: Iterable[_Fact]) -> list[_Fact]:
    """The n-th fact with a key gets the key plus n, so repeats pair in order."""
    seen: dict[tuple[object, ...], int] = {}
    unique: list[_Fact] = []
    for fact in facts:
        count = seen.get(fact.key, 0)
        seen[fact.key] = count + 1
        unique.append(_Fact(fact.key + (count,), fact.text))
    return unique


# -- facts of one run, per section ------------------------------------------------------------------


def _request(events: Sequence[object]) -> list[_Fact]:
    start = next((e for e in events if isinstance(e, RunStarted)), None)
    if start is None:
        return [_Fact(("question",), "no run started")]
    who = ("caller " + ",".join(sorted(start.caller_tags))) if start.caller_tags else "public caller"
    if start.caller_region:
        who += f" in {start.caller_region}"
    # What the run was asked with, then the changes made live while it was held (marked so).
    pins = {stage: plugin for stage, plugin in start.pins.items()}
    excluded = dict.fromkeys(sorted(start.excluded), "")
    units = dict.fromkeys(sorted(start.excluded_units), "")
    intent = start.intent_cnl
    for event in events:
        if not (isinstance(event, Intervened) and event.live):
            continue
        if event.change == "exclude_plugin":
            excluded[event.target] = " (live)"
            pins = {stage: plugin for stage, plugin in pins.items() if plugin != event.target}
        elif event.change == "pin_plugin":
            pins[event.stage or ""] = f"{event.target} (live)"
            excluded.pop(event.target, None)
        elif event.change == "exclude_unit":
            units[event.target] = " (live)"
        else:
            intent = event.target
    facts = [
        _Fact(("question",), f"question: {start.question}"),
        _Fact(("caller",), f"{who} as of {start.as_of}"),
        _Fact(("kb",), f"kb version: {start.kb_version}"),
        _Fact(("pins",), f"pinned: {', '.join(f'{s}={p}' for s, p in sorted(pins.items())) or 'none'}"),
        _Fact(("excluded",), f"excluded: {', '.join(k + v for k, v in excluded.items()) or 'none'}"),
        _Fact(("units",), f"excluded units: {', '.join(k + v for k, v in units.items()) or 'none'}"),
    ]
    if intent:
        facts.append(_Fact(("intent",), "intent edited: " + " ".join(intent.split())))
    resolved = list(dict.fromkeys(note for e in events if isinstance(e, IntentDetected) for note in e.resolved))
    if start.memory or resolved:
        facts.append(
            _Fact(
                ("memory",), f"memory: {len(start.memory)} record(s) offered; " + ("; ".join(resolved) or "none used")
            )
        )
    return facts


def _plan(events: Sequence[object]) -> list[_Fact]:
    facts: list[_Fact] = []
    for plan in (e for e in events if isinstance(e, PlanBuilt)):
        reasons = "; ".join(plan.reasons)
        facts.append(
            _Fact(("plan", plan.revision), f"r{plan.revision} by {plan.planner}" + (f": {reasons}" if reasons else ""))
        )
        for stage in plan.stages:
            why = f" — {'; '.join(stage.reasons)}" if stage.reasons else ""
            facts.append(
                _Fact(("stage", plan.revision, stage.stage), f"{stage.stage}: {', '.join(stage.candidates)}{why}")
            )
    return facts


def _attempt_text(stage: str, plugin: str, intent: int, status: str, reason: str) -> str:
    where = f"{stage} {plugin}" + (f" (intent {intent})" if intent else "")
    return f"{where} {status}" + (f": {reason}" if reason else "")


def _attempts(events: Sequence[object]) -> list[_Fact]:
    """Plan revisions, attempts (skipped and not reached included), backtracks and the user's
    interventions, in run order. An attempt that never finished reads "running"."""
    facts: list[_Fact] = []
    # The running attempt of (intent, stage, plugin): its finish closes it whatever revision the
    # finish names, as the explorer's timeline does.
    running: dict[tuple[object, ...], int] = {}
    for event in events:
        match event:
            case PlanBuilt():
                facts.append(_Fact(("plan", event.revision), f"plan r{event.revision} by {event.planner}"))
            case AttemptStarted():
                running[(event.intent_index, event.stage, event.plugin)] = len(facts)
                facts.append(
                    _Fact(
                        ("attempt", event.revision, event.intent_index, event.stage, event.plugin),
                        _attempt_text(event.stage, event.plugin, event.intent_index, "running", ""),
                    )
                )
            case AttemptFinished():
                text = _attempt_text(event.stage, event.plugin, event.intent_index, event.status, event.reason)
                at = running.pop((event.intent_index, event.stage, event.plugin), None)
                if at is None:
                    facts.append(
                        _Fact(("attempt", event.revision, event.intent_index, event.stage, event.plugin), text)
                    )
                else:
                    facts[at] = _Fact(facts[at].key, text)
            case Backtracked():
                symbol, what = BACKTRACKS[event.level]
                reason = event.reason.removeprefix(f"{what}:").strip()
                about = event.plugin or event.stage
                facts.append(
                    _Fact(
                        ("backtrack", event.level, event.stage, event.plugin, event.revision),
                        f"{symbol} L{event.level} {what} ({about}): {reason}",
                    )
                )
            case Intervened():
                facts.append(_Fact(("intervened", event.change, event.target), f"✎ {event.note}"))
    return facts


def _latest_retrievals(events: Sequence[object]) -> dict[int, RetrievalScored]:
    """The retrieval each intent's evidence panel shows: its latest."""
    latest: dict[int, RetrievalScored] = {}
    for event in events:
        if isinstance(event, RetrievalScored):
            latest[event.intent_index] = event
    return latest


def _candidate_text(candidate: CandidateScore | None) -> str:
    if candidate is None:
        return ""
    cut = "" if candidate.kept else f" · cut: {candidate.cut_reason or 'not kept'}"
    return f"#{candidate.rank} {candidate.id}  {candidate.score:.3f}{cut}"


def _moved(left: CandidateScore, right: CandidateScore) -> str:
    """ "↑2 · score +0.120": rank moved up 2 (a smaller rank), score rose by 0.12."""
    notes: list[str] = []
    if right.rank != left.rank:
        notes.append(f"↑{left.rank - right.rank}" if right.rank < left.rank else f"↓{right.rank - left.rank}")
    delta = right.score - left.score
    if abs(delta) >= SCORE_STEP:
        notes.append(f"score {delta:+.3f}")
    return " · ".join(notes)


def _unit_row(left: CandidateScore | None, right: CandidateScore | None) -> DiffRow:
    text_l, text_r = _candidate_text(left), _candidate_text(right)
    kept_r = bool(right and right.kept)
    if left is not None and right is not None and left.kept and kept_r:
        note = _moved(left, right)
        return _changed("Evidence", text_l, text_r, note) if note else DiffRow("Evidence", text_l, text_r, "same")
    if kept_r:
        was = f" (was cut: {left.cut_reason or 'not kept'})" if left else ""
        return DiffRow("Evidence", text_l, text_r, "added", f"new{was}")
    cut = f" (cut: {right.cut_reason or 'not kept'})" if right else ""
    return DiffRow("Evidence", text_l, text_r, "removed", f"dropped{cut}")


def _evidence(left_events: Sequence[object], right_events: Sequence[object]) -> list[DiffRow]:
    """Per intent, its retrieval plugin, then every unit kept by either run: in the right run's rank
    order, then the units only the left run kept, each with how its rank and score moved."""
    left_all, right_all = _latest_retrievals(left_events), _latest_retrievals(right_events)
    rows: list[DiffRow] = []
    for intent in sorted(set(left_all) | set(right_all)):
        a, b = left_all.get(intent), right_all.get(intent)
        heads = [
            f"intent {intent} via {s.plugin}: {len(s.evidence_ids)} kept of {s.total_candidates}" if s else ""
            for s in (a, b)
        ]
        if a and b and heads[0] != heads[1]:
            rows.append(_changed("Evidence", *heads))
        else:
            rows.append(DiffRow("Evidence", heads[0], heads[1], "same" if a and b else ("added" if b else "removed")))
        by_id_l = {c.id: c for c in (a.candidates if a else ())}
        by_id_r = {c.id: c for c in (b.candidates if b else ())}
        kept_r = sorted((c for c in by_id_r.values() if c.kept), key=lambda c: c.rank)
        kept_l = sorted(
            (c for c in by_id_l.values() if c.kept and not (c.id in by_id_r and by_id_r[c.id].kept)),
            key=lambda c: c.rank,
        )
        rows.extend(_unit_row(by_id_l.get(c.id), c) for c in kept_r)
        rows.extend(_unit_row(c, by_id_r.get(c.id)) for c in kept_l)
    return rows or [DiffRow("Evidence", "none", "none", "same")]


def _answer(events: Sequence[object], unfinished: str = "running") -> list[_Fact]:
    """`unfinished`: what a run without RunFinished is ("running", or "stopped while held …")."""
    answer = next((e for e in reversed(events) if isinstance(e, AnswerReady)), None)
    finished = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    if answer is None:
        status = finished.status if finished else unfinished
        return [_Fact(("status",), f"no answer (run {status})")]
    facts = [_Fact(("status",), f"status: {answer.status}"), _Fact(("answer",), answer.answer)]
    facts.extend(_Fact(("cites", unit_id), f"cites {unit_id}") for unit_id in answer.evidence_ids)
    return facts


def diff_runs(
    left: Sequence[object], right: Sequence[object], *, unfinished: tuple[str, str] = ("running", "running")
) -> RunDiff:
    """The rows of the run diff: `left` is the earlier run's events, `right` the later's;
    `unfinished`: what each is when it has no RunFinished (a run stopped while held is not running)."""
    rows: list[DiffRow] = []
    for name, facts in (("Request", _request), ("Plan", _plan), ("Attempts", _attempts)):
        rows.extend(_pair(name, _unique(facts(left)), _unique(facts(right))) or [DiffRow(name, "none", "none", "same")])
    rows.extend(_evidence(left, right))
    rows.extend(_pair("Answer", _unique(_answer(left, unfinished[0])), _unique(_answer(right, unfinished[1]))))
    return RunDiff(tuple(rows))
