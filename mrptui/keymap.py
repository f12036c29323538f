"""The user keymap (`config/keymap.json`): binding id → keys, validated, with a line per problem."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import RootModel, ValidationError, field_validator
from textual.binding import Binding

from core.config import ConfigError, read_json

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


def binding_ids() -> dict[str, Binding]:
    """Every binding id of the explorer (all screens and widgets), for validating a keymap."""
    from mrptui.app import ExplorerApp
    from mrptui.screens.diff import DiffScreen
    from mrptui.screens.evidence_detail import EvidenceDetailScreen
    from mrptui.screens.help import HelpScreen
    from mrptui.screens.main import MainScreen
    from mrptui.screens.kb import KBScreen
    from mrptui.screens.modals import IntentModal, PathModal, TextModal, UnitModal
    from mrptui.screens.eval import EvalScreen
    from mrptui.screens.rules import RulesScreen
    from mrptui.widgets.answer import AnswerPanel, CitationList
    from mrptui.widgets.evidence import EvidenceTable
    from mrptui.widgets.proofs import ProofTree
    from mrptui.widgets.query import QueryBox
    from mrptui.widgets.timeline import AttemptsTimeline

    classes = (ExplorerApp, MainScreen, QueryBox, AttemptsTimeline, EvidenceTable, ProofTree, AnswerPanel,
               CitationList, EvidenceDetailScreen, KBScreen, RulesScreen, DiffScreen, HelpScreen, TextModal, UnitModal, PathModal,
               IntentModal, EvalScreen)
    return {b.id: b for cls in classes for b in bindings_of(cls) if b.id}


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
        problems: dict[str, str] = {}
        for error in exc.errors():
            where = str(error["loc"][0]) if error["loc"] else ""
            if error["type"] == "value_error":
                problems[where] = f"{path}: {error['msg'].removeprefix('Value error, ')}"
            elif not where:
                problems[where] = f"{path}: expected a JSON object of binding id → keys"
            else:
                problems[where] = f"{path}: {where}: expected keys as \"ctrl+s,f9\" or [\"ctrl+s\", \"f9\"]"
        return {}, list(problems.values())
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
