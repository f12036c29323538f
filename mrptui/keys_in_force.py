"""Which keys run what where the focus is, after the user keymap: the key bar's and the command
palette's one source (a window shows its own keys; a text box's printable keys type). Apart from
mrptui/keymap.py, which lists every screen's bindings, so the widgets that show keys import no
screen."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.binding import ActiveBinding, Binding
from textual.dom import DOMNode
from textual.keys import key_to_character
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, TextArea


def types_text(widget: Widget | None) -> bool:
    """Whether printable keys type into `widget` (an editable text box): a command is then reached
    by its F-key or chord, since its letter would be typed."""
    return isinstance(widget, (TextArea, Input)) and not getattr(widget, "read_only", False) and not widget.disabled


class KeepsActiveBindings(Screen[None]):
    """A screen that works out its active bindings once per focus, keymap and `refresh_bindings`
    rather than on every ask. A panel key asked three times (issue 41, keypress while a question
    runs): the focus model as the key arrives, the key bar as the focus moves, and the key bar
    again after the frame, where Textual's `set_focus` publishes once more for Focus and Blur
    handlers that change what `check_action` says. By Textual's contract for dynamic actions such
    a change calls `refresh_bindings`, which forgets the kept ones; what else they depend on (the
    focused widget and its ancestors, its `loading`, the keymap) is what they are kept by."""

    _bindings_asked = 0  # refresh_bindings calls: what check_action says may have changed
    _setting_focus = False
    _kept_bindings: tuple[tuple[object, ...], dict[str, ActiveBinding]] | None = None

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        focused = self.focused
        chain = () if focused is None else (focused.loading, *focused.ancestors_with_self)
        key = (self._bindings_asked, self.app._keymap, *chain)
        kept = self._kept_bindings
        if kept is None or kept[0] != key:
            kept = self._kept_bindings = (key, super().active_bindings)
        return kept[1]

    def refresh_bindings(self) -> None:
        self._bindings_asked += 1
        super().refresh_bindings()

    def _watch_focused(self) -> None:
        # The focus is among what the bindings are kept by: publish without forgetting them.
        self.bindings_updated_signal.publish(self)

    def set_focus(self, widget: Widget | None, scroll_visible: bool = True, from_app_focus: bool = False) -> None:
        self._setting_focus = True
        try:
            super().set_focus(widget, scroll_visible, from_app_focus)
        finally:
            self._setting_focus = False

    def call_after_refresh(self, callback: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
        if self._setting_focus and callback == self.refresh_bindings:
            callback = self._watch_focused  # Textual's publish after the focus move's frame (see above)
        return super().call_after_refresh(callback, *args, **kwargs)


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
