"""The user keymap (`config/keymap.json`): binding id → keys, validated, with a line per problem."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import RootModel, ValidationError, field_validator
from textual.app import App
from textual.binding import Binding
from textual.dom import DOMNode
from textual.keys import key_to_character
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea

from core.infra.config import ConfigError, read_json

KEYMAP_FILE = "keymap.json"
MODIFIERS = frozenset({"ctrl", "shift", "alt", "meta", "super", "hyper"})


def bindings_of(node) -> Iterable[Binding]:
    """The bindings of a widget, screen or app class (or instance) that carry an id."""
    for binding in getattr(node, "BINDINGS", []):
        if isinstance(binding, Binding) and binding.id:
            yield binding


class KeymapFile(RootModel[dict[str, str | list[str]]]):
    """`config/keymap.json`: binding id → keys, as "ctrl+s", "ctrl+s,f9" or ["ctrl+s", "f9"]."""

    @field_validator("root")
    @classmethod
    def _non_empty(cls, value: dict[str, str | list[str]]) -> dict[str, str | list[str]]:
        for binding_id, keys in value.items():
            parts = keys if isinstance(keys, list) else keys.split(",")
            if not parts or any(not part.strip() for part in parts):
                raise ValueError(f"{binding_id!r}: an empty key")
        return value


def key_known(key: str) -> bool:
    """Whether Textual can ever report `key`: modifiers, then one character or a key name."""
    from textual.keys import KEY_NAME_REPLACEMENTS, Keys, key_to_character

    *modifiers, base = key.split("+") if key != "+" else ["+"]
    if any(m not in MODIFIERS for m in modifiers) or not base:
        return False
    names = {k.value.rsplit("+", 1)[-1] for k in Keys} | set(KEY_NAME_REPLACEMENTS.values()) | {"newline"}
    return len(base) == 1 or base in names or key_to_character(base) is not None


APP_BINDINGS: list[Binding] = [
    Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True, tooltip="Quit mrptui"),
    Binding("f1", "help", "Help", id="app.help", tooltip="Help for the focused panel"),
    Binding(
        "slash",
        "ask",
        "Ask",
        id="app.ask",
        tooltip="The question box, from any screen (any key that is not a command there also goes to it)",
    ),
    Binding("ctrl+t", "toggle_theme", "Theme", id="app.theme", tooltip="Toggle the light and dark themes"),
    # Screens are F-keys on every screen (the letters k and R act only outside text boxes).
    Binding("f2", "open('kb_screen')", "KB", id="app.kb", tooltip="The KB: units, errors, why-not"),
    Binding("f3", "open('rules_screen')", "Rules", id="app.rules", tooltip="Rules: which fired, bindings"),
    Binding(
        "f4",
        "open('eval_screen')",
        "Eval",
        id="app.eval",
        tooltip="Run the labelled queries against this KB and rules: pass/fail per question and gate",
    ),
    Binding(
        "ctrl+o",
        "open('memory_screen')",
        "Memory",
        id="app.memory",
        tooltip="This conversation's memory: what follow-ups refer back to, scored; pin, forget, clear",
    ),
    Binding(
        "f8",
        "open('problems')",
        "Problems",
        id="app.problems",
        tooltip="Every KB, rules and plugin error and warning, with file:line:col",
    ),
    Binding(
        "ctrl+z",
        "undo",
        "Undo",
        id="app.undo",
        tooltip="Undo the last pin, exclusion, dropped unit, edited intent or breakpoint (in a text box: typing)",
    ),
]


def apply_keymap(app: App, path: Path) -> dict[str, str]:
    """Apply `path` (binding id → keys) if it exists. A bad file, an unknown id or key name is a
    notification naming the file; the default keys stay for whatever was not applied."""
    keymap, problems = read_keymap(path)
    if keymap:
        app.set_keymap(keymap)
    if problems:
        shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
        what = "ignored those entries" if keymap else "kept the default keys"
        app.notify(
            f"{shown} — {what} (the binding ids are listed in docs/tui.md)",
            title="Keymap",
            severity="error",
            timeout=12,
        )
    return keymap


def types_text(widget: Widget | None) -> bool:
    """Whether printable keys type into `widget` (an editable text box): a command is then reached
    by its F-key or chord, since its letter would be typed."""
    return isinstance(widget, (TextArea, Input)) and not getattr(widget, "read_only", False) and not widget.disabled


def bindings_in_force(screen: Screen) -> list[tuple[DOMNode, Binding]]:
    """Every (node, binding) a key runs from where `screen`'s focus is, after the user keymap, one
    per key in the order Textual looks them up: the focused widget's, its ancestors', the screen's
    (a window stops there: the main screen's keys do not reach through it), the app's; plus the
    priority bindings (quit, the palette), which Textual checks through a window as well. In a text
    box a printable key types, so its bindings are left out."""
    app = screen.app
    active = screen.active_bindings
    found = [(item.node, item.binding) for item in active.values()]
    if screen.is_modal:  # else the active bindings already reach the app's
        for node, bindings in screen._binding_chain:
            for key, binding in bindings:
                if (
                    binding.priority
                    and key not in active
                    and app._check_action_state(binding.action, node) is not False
                ):
                    found.append((node, binding))
    if not types_text(screen.focused):
        return found
    return [(node, binding) for node, binding in found if not _printable(binding.key)]


def _printable(key: str) -> bool:
    # Textual names `/` "slash" (Unicode calls it SOLIDUS), which key_to_character does not map back.
    character = "/" if key == "slash" else key_to_character(key)
    return character is not None and character.isprintable()


def action_target(app: App, node: DOMNode, action: str) -> tuple[DOMNode, str, tuple[object, ...]]:
    """What `action` bound on `node` runs: `screen.step_forward` on a panel is the screen's `step_forward`."""
    return app._parse_action(action, node)


def keys_in_force(screen: Screen) -> dict[tuple[DOMNode, str, tuple[object, ...]], list[Binding]]:
    """Per action (by `action_target`), the bindings in force that run it where `screen`'s focus
    is, one per key, in lookup order (in the question box `Step` has f10 and alt+n, not n; a
    panel's `Sort` none)."""
    found: dict[tuple[DOMNode, str, tuple[object, ...]], list[Binding]] = {}
    for node, binding in bindings_in_force(screen):
        found.setdefault(action_target(screen.app, node, binding.action), []).append(binding)
    return found


def key_in_force(app: App, binding: Binding, in_force: list[Binding]) -> str | None:
    """The key to name for `binding`: its own first key in force (its keys as declared or
    remapped), else another key that runs the same action there, else none."""
    own = [b for b in in_force if b.id is not None and b.id == binding.id]
    shown = own or in_force
    return app.get_key_display(shown[0]) if shown else None


def binding_ids() -> dict[str, Binding]:
    """Every binding id of the explorer (all screens and widgets), for validating a keymap."""
    from mrptui.screens.diff import DiffScreen
    from mrptui.screens.eval import EvalScreen
    from mrptui.screens.evidence_detail import EvidenceDetailScreen
    from mrptui.screens.help import HelpScreen
    from mrptui.screens.kb import KBScreen
    from mrptui.screens.main import MainScreen
    from mrptui.screens.modals import IntentModal, PathInput, PathModal, TextModal, UnitModal
    from mrptui.screens.rules import RulesScreen
    from mrptui.widgets.answer import AnswerPanel, CitationList
    from mrptui.widgets.evidence import EvidenceTable
    from mrptui.widgets.proofs import ProofTree
    from mrptui.widgets.query import QueryBox
    from mrptui.widgets.timeline import AttemptsTimeline

    classes = (
        MainScreen,
        QueryBox,
        AttemptsTimeline,
        EvidenceTable,
        ProofTree,
        AnswerPanel,
        CitationList,
        EvidenceDetailScreen,
        KBScreen,
        RulesScreen,
        DiffScreen,
        HelpScreen,
        TextModal,
        UnitModal,
        PathModal,
        PathInput,
        IntentModal,
        EvalScreen,
    )
    every = (*APP_BINDINGS, *(b for cls in classes for b in bindings_of(cls)))
    return {b.id: b for b in every if b.id}


def read_keymap(path: Path) -> tuple[dict[str, str], list[str]]:
    """The usable entries of a keymap file (none when it is missing) and one line per problem."""
    if not path.is_file():
        return {}, []
    try:
        data = read_json(path)
    except ConfigError as exc:
        return {}, [d.format() for d in exc.diagnostics]
    try:
        entries = KeymapFile.model_validate(data).root
    except ValidationError as exc:
        by_entry: dict[str, str] = {}
        for error in exc.errors():
            where = str(error["loc"][0]) if error["loc"] else ""
            if error["type"] == "value_error":
                by_entry[where] = f"{path}: {error['msg'].removeprefix('Value error, ')}"
            elif not where:
                by_entry[where] = f"{path}: expected a JSON object of binding id → keys"
            else:
                by_entry[where] = f'{path}: {where}: expected keys as "ctrl+s,f9" or ["ctrl+s", "f9"]'
        return {}, list(by_entry.values())
    known = binding_ids()
    keymap: dict[str, str] = {}
    problems: list[str] = []
    for binding_id, keys in entries.items():
        parts = [part.strip() for part in (keys if isinstance(keys, list) else keys.split(","))]
        if binding_id not in known:
            problems.append(f"{path}: unknown binding id {binding_id!r}")
        elif bad := [part for part in parts if not key_known(part)]:
            problems.append(f"{path}: {binding_id}: unknown key {', '.join(map(repr, bad))}")
        else:
            keymap[binding_id] = ",".join(parts)
    return keymap, problems
