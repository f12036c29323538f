"""A one-line key bar: Textual's Footer look, drawn as one line instead of a widget per key.

Textual's Footer recomposes one widget per key whenever the active bindings change, which happens
on every focus change; with ~25 keys that costs ~90 ms (and a layout pass) per keypress. This bar
renders the same line from the bindings in force where the focus is (`keymap.bindings_in_force`:
a window's own keys, never the main screen's under it), repaints only when the line changes, keeps the
lines drawn for the last few key sets (the focus moving among the panes brings them back in turn),
and runs a key when it is clicked.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.widget import Widget

from mrptui.keys_in_force import bindings_in_force, types_text
from mrptui.widgets.kept_static import KeptDrawing

# Keys that stay on the bar at every width: a narrow terminal cuts the others, never these.
KEPT_IDS = ("app.caller", "app.quit", "app.help")


class KeyBar(KeptDrawing, Widget, can_focus=False):
    """The keys of the focused widget, its screen and the app, as the Footer shows them."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"keybar--key", "keybar--description", "keybar--palette"}

    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
        .keybar--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
        }
        .keybar--description {
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        .keybar--palette {
            color: $foreground 20%;
        }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._items: list[tuple[Binding, str, str]] = []  # binding, key label, description
        self._palette: tuple[Binding, str, str] | None = None
        self._spans: list[tuple[int, int, Binding]] = []  # start, end cell, binding (for clicks)
        # What the items were made from: a screen that keeps its active bindings hands back the same
        # dict until they may have changed (`KeepsActiveBindings`), so a publish that changes nothing
        # costs nothing here either.
        self._made_from: tuple[object, bool] | None = None

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self.app.theme_changed_signal.subscribe(self, lambda _: self.refresh())
        self.call_after_refresh(self._bindings_changed, self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        made_from = (screen.active_bindings, types_text(screen.focused))
        if self._made_from is not None and made_from[0] is self._made_from[0] and made_from[1] == self._made_from[1]:
            return
        self._made_from = made_from
        items: list[tuple[Binding, str, str]] = []
        seen: set[str] = set()
        palette = None
        app = self.app
        for _node, binding in bindings_in_force(screen):
            if binding.key == app.COMMAND_PALETTE_BINDING and app.ENABLE_COMMAND_PALETTE:
                palette = (binding, app.get_key_display(binding), binding.description)
                continue
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            items.append((binding, app.get_key_display(binding), binding.description))
        # Stable: the kept keys go last, by the palette, in KEPT_IDS's order.
        items.sort(key=lambda item: KEPT_IDS.index(item[0].id) + 1 if item[0].id in KEPT_IDS else 0)
        if items != self._items or palette != self._palette:
            self._items, self._palette = items, palette
            self.refresh()

    def drawing_inputs(self) -> tuple[object, ...]:
        styles = tuple(
            self.get_component_rich_style(name) for name in ("keybar--key", "keybar--description", "keybar--palette")
        )
        return (tuple(self._items), self._palette, styles, *super().drawing_inputs())

    def drawn_extra(self) -> object:
        return self._spans

    def restore_extra(self, extra: object) -> None:
        self._spans = extra  # type: ignore[assignment]

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keybar--key")
        description_style = self.get_component_rich_style("keybar--description")
        line = Text(no_wrap=True, overflow="crop", end="")
        self._spans = []
        width = self.size.width
        palette = Text()
        if self._palette is not None:
            binding, key, description = self._palette
            palette = Text.assemble(
                ("▏", self.get_component_rich_style("keybar--palette")),
                (key, key_style),
                (f" {description} ", description_style),
            )
        kept = [item for item in self._items if item[0].id in KEPT_IDS]
        kept_width = sum(len(f" {key} {description} ") for _, key, description in kept)
        room = width - palette.cell_len
        for binding, key, description in self._items:
            if binding.id in KEPT_IDS:
                continue
            label = f"{description} " if description else ""
            # A key whose label does not fit whole is left out: a cut one ("shift+f10" without
            # "Back", "esc Le") reads as a key that does something else.
            if line.cell_len + cell_len(f" {key} {label}") > room - kept_width:
                break
            start = line.cell_len
            line.append(f" {key} ", key_style)
            line.append(label, description_style)
            self._spans.append((start, line.cell_len, binding))
        for binding, key, description in kept:
            start = line.cell_len
            line.append(f" {key} ", key_style)
            line.append(f"{description} ", description_style)
            self._spans.append((start, line.cell_len, binding))
        if palette:
            line.pad_right(max(0, room - line.cell_len))
            self._spans.append((room, width, self._palette[0]))  # type: ignore[index]
            line.append_text(palette)
        return line

    def _binding_at(self, x: int) -> Binding | None:
        return next((binding for start, end, binding in self._spans if start <= x < end), None)

    def on_click(self, event: events.Click) -> None:
        binding = self._binding_at(event.x)
        if binding is not None:
            event.stop()
            self.app.simulate_key(binding.key.split(",")[0].strip())

    def on_mouse_move(self, event: events.MouseMove) -> None:
        binding = self._binding_at(event.x)
        self.tooltip = (binding.tooltip or binding.description) if binding is not None else None

    @property
    def keys(self) -> list[str]:
        """The key labels shown, in order (tests)."""
        return [key for _, key, _ in self._items]
