"""`mrptui ask --step` / `--break SPEC`: the explorer's debugger in a plain terminal.

The same run control as the explorer (`mrptui.live_run.LiveRun`), pulled in the foreground: every
event is printed as one line on stderr, and at each hold point a prompt reads a command from stdin.
End of input continues to the end, so `--step` in CI logs prints the whole trace and never waits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from core.kernel.contract import Request
from core.kernel.events import Event
from core.kernel.steering import Intervention, Steering
from mrptui.breakpoints import Breakpoint
from mrptui.commands import UsageError
from mrptui.live_run import LiveRun
from mrptui.run_points import describe_point, rerun_reason

STAGES = ("sd", "kb", "gs", "val")
HELP = """commands: n (one event) · c (to the next breakpoint) · g (to the end) · x PLUGIN (exclude) ·
p PLUGIN (pin first in its stage) · q (cancel the run) · ? (this help)"""


def parse_break(spec: str) -> Breakpoint:
    """`kb` (a stage), `kb:kb-balanced` or `kb-balanced` (a plugin), `backtrack`, `costly`, `call`."""
    text = spec.strip()
    if text in ("backtrack", "costly", "call"):
        return Breakpoint(text)  # type: ignore[arg-type]
    if text in STAGES:
        return Breakpoint("stage", text)
    stage, _, plugin = text.rpartition(":")
    if stage and stage not in STAGES:
        raise UsageError(f"--break {spec!r}: {stage!r} is not a stage (sd, kb, gs, val)")
    if not plugin:
        raise UsageError(f"--break {spec!r}: name a stage, STAGE:PLUGIN, a plugin, backtrack, costly or call")
    return Breakpoint("plugin", plugin)


def event_line(event: Event) -> str:
    details = " ".join(
        str(getattr(event, name)) for name in ("stage", "plugin", "status") if getattr(event, name, None)
    )
    reason = getattr(event, "reason", "") or getattr(event, "note", "")
    return f"{event.seq:>4} {event.kind} {details}".rstrip() + (f": {reason}" if reason else "")


class Stepper:
    """One run under the headless debugger; `run()` returns every event it pulled."""

    def __init__(
        self,
        session,
        request: Request,
        breakpoints: set[Breakpoint],
        *,
        step: bool,
        read: Callable[[], str],
        out: TextIO,
    ):
        self.session = session
        self.request = request
        self.read = read
        self.out = out
        self.events: list[Event] = []
        steering = Steering()
        self.live = LiveRun(
            lambda: session.run(request, steering=steering), steering, lambda: breakpoints, session.costly_plugins()
        )
        if step:
            self.live.step()

    def run(self) -> list[Event]:
        self.live.pull(self._deliver, self._held)
        return self.events

    def _deliver(self, event: Event) -> None:
        self.events.append(event)
        print(event_line(event), file=self.out, flush=True)

    def _held(self, point: Breakpoint, event: Event) -> None:
        why = "" if point.kind in ("step", "at") else f" · {point.label}"
        print(f"⏸ held {describe_point(event)}{why}", file=self.out, flush=True)
        while not self._command():
            pass

    def _command(self) -> bool:
        """Read and obey one command; True when the run was released (or cancelled)."""
        print("(mrptui) ", end="", file=self.out, flush=True)
        try:
            line = self.read()
        except EOFError:
            line = ""
            print("g (end of input)", file=self.out, flush=True)
            self.live.finish()
            return True
        verb, _, argument = line.strip().partition(" ")
        release = {
            "n": self.live.step,
            "": self.live.step,
            "c": lambda: self.live.resume(backtracks=False),
            "g": self.live.finish,
            "q": self.live.cancel,
        }
        if verb in release:
            release[verb]()
            return True
        if verb in ("x", "p") and argument.strip():
            self._intervene(verb, argument.strip())
        else:
            print(HELP, file=self.out, flush=True)
        return False

    def _intervene(self, verb: str, plugin: str) -> None:
        if verb == "x":
            change = Intervention(kind="exclude_plugin", target=plugin)
        else:
            stage = next((s for s, ids in self.session.plugin_ids().items() if plugin in ids and s in STAGES), None)
            if stage is None:
                print(f"unknown plugin {plugin!r}", file=self.out, flush=True)
                return
            change = Intervention(kind="pin_plugin", target=plugin, stage=stage)
        reason = rerun_reason(change, self.events, live=True)
        if reason:
            print(f"cannot apply live: {reason}; ask again with --exclude or a pin option", file=self.out, flush=True)
            return
        self.live.intervene(change)
        print(f"{change.describe()}: applied when the run goes on", file=self.out, flush=True)
