"""F1: help for the focused panel — what it shows and every key that works there."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.markup import escape
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown, Static


def help_for(screen: Screen) -> tuple[str, list[tuple[str, list[tuple[str, str]]]]]:
    """The HELP text of the focused widget (or its nearest ancestor that has one) and the active
    bindings grouped as: this panel, this screen, everywhere."""
    node: DOMNode | None = screen.focused or screen
    text = ""
    while node is not None:
        if getattr(node, "HELP", None):
            text = node.HELP or ""
            break
        node = node.parent
    groups: dict[str, list[tuple[str, str]]] = {"This panel": [], "This screen": [], "Everywhere": []}
    seen: set[str] = set()
    for active in screen.active_bindings.values():
        binding = active.binding
        if not (binding.show or binding.id) or binding.action in seen or binding.action.startswith("panel("):
            continue
        seen.add(binding.action)
        key = screen.app.get_key_display(binding)
        keys = [key] + [screen.app.get_key_display(Binding(k, binding.action)) for k in _other_keys(screen, binding)]
        description = binding.tooltip or binding.description
        if active.node is screen.app:
            group = "Everywhere"
        elif active.node is screen:
            group = "This screen"
        else:
            group = "This panel"
        groups[group].append((" / ".join(dict.fromkeys(keys)), description))
    if any(a.binding.action.startswith("panel(") for a in screen.active_bindings.values()):
        groups["This screen"].append(("1 … 5", "Show / focus a panel: Plan, Attempts, Evidence, Proofs, Answer"))
    return text, [(name, rows) for name, rows in groups.items() if rows]


def _other_keys(screen: Screen, binding: Binding) -> list[str]:
    keys = []
    for active in screen.active_bindings.values():
        if active.binding.action == binding.action and active.binding.key != binding.key:
            keys.append(active.binding.key)
    return keys


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f1", "dismiss", "Close", id="help.close", tooltip="Close help"),
    ]

    def __init__(self, text: str, groups: list[tuple[str, list[tuple[str, str]]]]) -> None:
        super().__init__()
        self.text = text
        self.groups = groups

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog wide") as dialog:
            dialog.border_title = "Help"
            dialog.border_subtitle = "esc close · ctrl+p every command"
            with VerticalScroll(id="dialog-body"):
                if self.text:
                    yield Markdown(self.text, id="help-text")
                for name, rows in self.groups:
                    width = max(len(key) for key, _ in rows)
                    lines = [f"[b]{escape(name)}[/b]"]
                    lines += [f"  [$accent]{escape(key.ljust(width))}[/]  {escape(desc)}" for key, desc in rows]
                    yield Static("\n".join(lines), classes="help-keys")
