"""F1: help for the focused panel — what it shows and every key that works there."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.markup import escape
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from mrptui.widgets.keybar import KeyBar


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
    active = list(screen.active_bindings.values())
    # A hidden binding whose action a shown one also runs (the timeline's → for the screen's `n`) is
    # an alternate key: it is listed with the shown binding, not on a line of its own.
    focused = screen.focused or screen
    shown = {
        _action(b)
        for node in focused.ancestors_with_self
        for b in getattr(node, "BINDINGS", [])
        if isinstance(b, Binding) and b.show
    }
    seen: set[str] = set()
    for item in active:
        binding = item.binding
        action = _action(binding)
        if not (binding.show or binding.id) or action in seen or binding.action.startswith("panel("):
            continue
        if not binding.show and action in shown:
            continue
        seen.add(action)
        key = screen.app.get_key_display(binding)
        keys = [key] + [screen.app.get_key_display(Binding(k, binding.action)) for k in _other_keys(active, binding)]
        description = binding.tooltip or binding.description
        if item.node is screen.app:
            group = "Everywhere"
        elif item.node is screen:
            group = "This screen"
        else:
            group = "This panel"
        groups[group].append((" / ".join(dict.fromkeys(keys)), description))
    if any(a.binding.action.startswith("panel(") for a in screen.active_bindings.values()):
        groups["This screen"].append(("1 … 5", "Show / focus a panel: Plan, Attempts, Evidence, Proofs, Answer"))
    return text, [(name, rows) for name, rows in groups.items() if rows]


def _action(binding: Binding) -> str:
    """The action without its namespace: `screen.step_forward` and `step_forward` are one action."""
    return binding.action.removeprefix("screen.").removeprefix("app.")


def _other_keys(active: list, binding: Binding) -> list[str]:
    action = _action(binding)
    return [item.binding.key for item in active if _action(item.binding) == action and item.binding.key != binding.key]


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
            with VerticalScroll(id="dialog-body"):
                if self.text:
                    from textual.widgets import Markdown  # markdown-it and pygments load on first F1, not at start

                    yield Markdown(self.text, id="help-text")
                for name, rows in self.groups:
                    width = max(len(key) for key, _ in rows)
                    lines = [f"[b]{escape(name)}[/b]"]
                    lines += [f"  [$accent]{escape(key.ljust(width))}[/]  {escape(desc)}" for key, desc in rows]
                    yield Static("\n".join(lines), classes="help-keys")
        yield KeyBar()
