"""Which validator vouched for the answer, read from the run's events: a grounded answer shows ✓
only beside a validator's verdict; without one it says that none ran, or why none gave one.

"grounded" is the kernel's word for an answer whose evidence was sufficient and that no validator
rejected (core/kernel/revisions.py): a plan without a val stage, or with every validator excluded,
unsupported or failing, is grounded too, and a check mark there read as a check that never happened."""

from __future__ import annotations

from core.kernel.events import Validated
from mrptui.state import ViewState

UNCHECKED = ("○", "warn")  # a grounded answer no validator accepted: never the ✓ of a verdict


def answer_revision(state: ViewState) -> int:
    """The plan revision the answer comes from: the one a level-3 backtrack names, else the last."""
    weak = [b.revision for b in state.backtracks if b.level == 3 and b.revision is not None]
    if weak:
        return weak[-1]
    return state.plans[-1].revision if state.plans else state.revision


def verdict(state: ViewState, intent_index: int) -> Validated | None:
    """The verdict a validator gave on `intent_index`'s answer in the answer's revision, if any."""
    revision = answer_revision(state)
    found = [v for v in state.validations if v.revision == revision and v.intent_index == intent_index]
    return found[-1] if found else None


def why_unchecked(state: ViewState, intent_index: int) -> str:
    """Why no validator gave a verdict: none ran, or what each that was tried said."""
    revision = answer_revision(state)
    tried = [
        row
        for row in state.attempts
        if row.stage == "val" and row.revision == revision and row.intent_index == intent_index
    ]
    if not tried:
        return "no validator ran"
    said = "; ".join(f"{row.plugin} {row.status}" + (f": {row.outcome}" if row.outcome else "") for row in tried)
    return f"no validator gave a verdict ({said})"


def intents_answered(state: ViewState) -> tuple[int, ...]:
    answer = state.answer
    if answer is None or not answer.parts:
        return (0,)
    return tuple(part.intent_index for part in answer.parts)


def grounded_head(state: ViewState) -> tuple[str, str, str]:
    """(symbol, tone, what follows "grounded") for a grounded answer: "✓ … accepted by val-x" when
    every part has an accepting verdict, else "○ … not validated: <why>"."""
    verdicts = {index: verdict(state, index) for index in intents_answered(state)}
    missing = [index for index, found in verdicts.items() if found is None or found.status != "accepted"]
    if not missing:
        plugins = sorted({v.plugin for v in verdicts.values() if v is not None})
        return "✓", "ok", f"accepted by {', '.join(plugins)}"
    symbol, tone = UNCHECKED
    if len(verdicts) > 1:
        return symbol, tone, f"not validated: {len(missing)} of {len(verdicts)} parts without a verdict"
    return symbol, tone, f"not validated: {why_unchecked(state, missing[0])}"


def part_symbol(state: ViewState, intent_index: int, status: str) -> tuple[str, str] | None:
    """The mark of one grounded part without an accepting verdict (None: the status's own)."""
    if status != "grounded":
        return None
    found = verdict(state, intent_index)
    return None if found is not None and found.status == "accepted" else UNCHECKED
