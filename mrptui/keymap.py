"""The user keymap (`config/keymap.json`): binding id → keys, validated, with a line per problem."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import RootModel, ValidationError, field_validator
from textual.app import App
from textual.binding import Binding

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
    Binding("f1", "open('help')", "Help", id="app.help", tooltip="Help for the focused panel"),
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
        "ctrl+g",
        "open('caller')",
        "Caller",
        id="app.caller",
        tooltip="Ask as another caller (ACL tags, region, as-of date): the last question runs again as it",
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


def binding_ids() -> dict[str, Binding]:
    """Every binding id of the explorer (all screens and widgets), for validating a keymap."""
    from mrptui.screens.caller import CallerInput, CallerModal
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
        CallerModal,
        CallerInput,
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
