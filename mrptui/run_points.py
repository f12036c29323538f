"""Points of a run in the user's words, and what identifies them across re-runs: where the engine is
held (`describe_point`), the signature a deterministic re-run holds again at (`signature`), and why
a change cannot be applied to the held run (`rerun_reason`). Shared by the explorer's run control and
`mrptui ask --step`; no Textual."""

from __future__ import annotations

from collections.abc import Sequence

from core.kernel.events import AttemptFinished, AttemptStarted, Backtracked, Event, IntentDetected, StageStarted
from core.kernel.steering import Intervention


def signature(event: Event) -> str:
    """What identifies a point of a run across a deterministic re-run."""
    return "|".join(str(getattr(event, name, "")) for name in ("kind", "stage", "plugin", "revision", "intent_index"))


def describe_point(event: Event) -> str:
    """'before kb-balanced (stage kb, revision 1)': where a run is held, in the user's words."""
    if isinstance(event, AttemptStarted):
        return f"before {event.plugin} (stage {event.stage}, revision {event.revision})"
    if isinstance(event, StageStarted):
        return f"at the start of stage {event.stage} (revision {event.revision})"
    if isinstance(event, Backtracked):
        return f"after the L{event.level} backtrack: {_backtrack(event)}"
    return f"after {event.kind.replace('_', ' ')}"


def _backtrack(event: Backtracked) -> str:
    """A backtrack in the timeline's words (its row reads `↩ L1 next candidate after kb-fast (r0)`)."""
    if event.level == 3:
        return f"weak answer from revision {event.revision}" + (f" ({event.plugin})" if event.plugin else "")
    if event.level == 2:
        return f"replan after {event.plugin or 'the plan'} (revision {event.revision})"
    return f"next candidate after {event.plugin or event.stage} (stage {event.stage}, revision {event.revision})"


def rerun_reason(intervention: Intervention, events: Sequence[Event], *, live: bool) -> str:
    """Why a change cannot be applied to the held run (so it needs a re-run), or "" when it can:
    only what has not happened yet can change without re-running what did."""
    if not live:
        return "the run has finished"
    called = [(e.stage, e.plugin) for e in events if isinstance(e, AttemptFinished) and e.status != "skipped"]
    match intervention.kind:
        case "exclude_plugin":
            if any(plugin == intervention.target for _, plugin in called):
                return f"{intervention.target} has already run"
        case "pin_plugin":
            if any(stage == intervention.stage for stage, _ in called):
                return f"stage {intervention.stage} has already called a plugin"
        case "exclude_unit":
            if any(stage == "kb" for stage, _ in called):
                return "retrieval has already run"
        case "edit_intent":
            if any(stage == "sd" for stage, _ in called) or any(isinstance(e, IntentDetected) for e in events):
                return "the intent was already detected"
    return ""
