"""The command palette (ctrl+p): every binding of the current screen and its panels, then, on the
main screen, breakpoints and per-plugin pins, exclusions and planners."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import ModalScreen, Screen

from mrptui.breakpoints import Breakpoint
from mrptui.keymap import bindings_of
from mrptui.keys_in_force import action_target, key_in_force, keys_in_force

if TYPE_CHECKING:
    from textual.app import App

    from mrptui.session_seam import SessionLike
    from mrptui.whatif import WhatIf

PaletteCommand = tuple[str, str, Callable[[], object]]  # (title, help, what it runs)
STAGES = ("sd", "kb", "gs", "val")
COSTLY = Breakpoint("costly")


class ExplorerCommands(Provider):
    """Every action of the current screen, plus breakpoints, pins and exclusions per plugin id."""

    def _commands(self) -> list[PaletteCommand]:
        commands = getattr(self.app, "palette_commands", None)
        return commands(self.screen) if callable(commands) else []

    async def discover(self) -> Hits:
        for title, help_text, callback in self._commands():
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)


def palette_commands(app: App, screen: Screen, whatif: WhatIf, session: SessionLike) -> list[PaletteCommand]:
    """Every binding of `screen` (and, on the main screen, of its panels) named with a key that runs
    it from where the focus is (none when no key does: a panel's command from the question box);
    on the main screen, breakpoints and `session`'s plugins, toggled and tried through `whatif`."""
    from mrptui.screens.main import MainScreen

    shown = keys_in_force(screen)
    commands: list[PaletteCommand] = []
    seen: set[tuple] = set()
    nodes: list = [screen]
    if isinstance(screen, MainScreen):
        nodes += list(screen.query(".panel"))
    for node in nodes:
        for binding in bindings_of(node):
            target = action_target(app, node, binding.action)  # a panel's `screen.step_forward` is the screen's Step
            if target in seen or binding.action.startswith("panel("):
                continue
            if node.check_action(binding.action, ()) is False:  # not offered here (a replay's re-run)
                continue
            seen.add(target)
            title = _with_key(binding.description, key_in_force(app, binding, shown.get(target, [])))
            commands.append((title, binding.tooltip or binding.description, partial(node.run_action, binding.action)))
    for action, title, help_text in APP_COMMANDS:
        in_force = shown.get(action_target(app, app, action), [])
        key = app.get_key_display(in_force[0]) if in_force else None
        commands.append((_with_key(title, key), help_text, partial(app.run_action, action)))
    if isinstance(screen, ModalScreen) or not isinstance(screen, MainScreen):
        return commands
    return commands + breakpoint_commands(whatif) + plugin_commands(whatif, session)


APP_COMMANDS = (
    ("toggle_theme", "Toggle light/dark theme", "Switch between textual-light and textual-dark"),
    ("open('help')", "Help for the focused panel", "Keys and what the panel shows"),
    ("open('caller')", "Ask as another caller", "ACL tags, region and as-of date; the last question runs again as it"),
    ("undo", "Undo the last change", "Take back the last pin, exclusion, dropped unit, edited intent or breakpoint"),
)


def _with_key(title: str, key: str | None) -> str:
    return f"{title} ({key})" if key else title


def toggle(whatif: WhatIf, title: str, help_text: str, point: Breakpoint) -> PaletteCommand:
    """A breakpoint toggle whose title says whether it is on now."""
    state = "on" if point in whatif.control.breakpoints else "off"
    return (f"{title}: {state}", f"Toggle ({state} now): {help_text}", partial(whatif.toggle_breakpoint, point))


def breakpoint_commands(whatif: WhatIf) -> list[PaletteCommand]:
    return [
        toggle(whatif, "Break on any backtrack", "hold the engine after every backtrack", Breakpoint("backtrack")),
        toggle(
            whatif,
            "Break before costly plugins",
            "hold the engine before every LLM or remote plugin call (on by default)",
            COSTLY,
        ),
        toggle(
            whatif, "Break before every plugin call", "hold the engine before each plugin is called", Breakpoint("call")
        ),
    ]


def plugin_commands(whatif: WhatIf, session: SessionLike) -> list[PaletteCommand]:
    commands: list[PaletteCommand] = []
    try:
        plugins = session.plugin_ids()
    except Exception:  # noqa: BLE001 - the palette must open even if the session is unhappy
        plugins = {}
    for stage in [s for s in STAGES if s in plugins] + [s for s in plugins if s not in STAGES]:
        commands.append(
            toggle(
                whatif,
                f"Break on stage {stage}",
                f"hold the engine when stage {stage} starts",
                Breakpoint("stage", stage),
            )
        )
        for plugin in plugins[stage]:
            commands.append(
                toggle(
                    whatif,
                    f"Break on plugin {plugin}",
                    f"hold the engine before {plugin} is called",
                    Breakpoint("plugin", plugin),
                )
            )
            if stage == "planner":
                commands.append(
                    (
                        f"Start with planner {plugin} and re-run",
                        "Re-run planned by this planner",
                        partial(whatif.rerun_with, planner=plugin),
                    )
                )
                continue
            commands.append(
                (
                    f"Pin {plugin} for {stage}",
                    "Try it first in its stage (the others stay as fallbacks): live while the "
                    "engine is held before that stage, else a re-run",
                    partial(whatif.rerun_with, pin=(stage, plugin)),
                )
            )
            commands.append(
                (
                    f"Exclude {plugin}",
                    "Never call it: live while the engine is held before it runs, else a re-run",
                    partial(whatif.rerun_with, exclude=plugin),
                )
            )
    return commands
