"""Small modal screens: text (unit, why-not, errors), a path prompt for save/export, the intent editor.
Each window has its own key bar: the main screen's keys do not work while it is open."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Static, TextArea

from core.cnl import parse_intents
from core.units import KnowledgeUnit
from mrptui.clipboard import copy_text
from mrptui.messages import OpenInEditor
from mrptui.widgets.field_grid import FieldGrid
from mrptui.widgets.keybar import KeyBar


class TextModal(ModalScreen[None]):
    """A titled, scrollable block of markup; escape/q closes, c copies the plain text."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="modal.close", tooltip="Close this window"),
        Binding("c", "copy", "Copy", id="modal.copy", tooltip="Copy the text to the clipboard"),
    ]

    def __init__(self, title: str, markup: str, *, plain: str | None = None, classes: str = "") -> None:
        super().__init__(classes=classes)
        self.title_text = title
        self.markup = markup
        self.plain = plain

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog") as dialog:
            dialog.border_title = self.title_text
            with VerticalScroll(id="dialog-body"):
                yield Static(self.markup, id="dialog-text")
        yield KeyBar()

    def action_copy(self) -> None:
        from textual.content import Content

        text = self.plain if self.plain is not None else Content.from_markup(self.markup).plain
        copy_text(self, text, f"copied {self.title_text.lower()}")


class ErrorModal(TextModal):
    """The one place worker and file errors are shown; the app keeps running."""

    def __init__(self, title: str, message: str) -> None:
        super().__init__(title, f"[$error]{escape(message)}[/]", plain=message, classes="error")


class PathInput(Input):
    """The path field: its Enter (Input's submit, unshown) named on the window's key bar."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "submit", "Write", id="path.write", tooltip="Write the file at this path"),
    ]


class PathModal(ModalScreen[str | None]):
    """Ask for a file path (prefilled); enter accepts, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="path.cancel", tooltip="Cancel without writing"),
    ]

    def __init__(self, title: str, default: str) -> None:
        super().__init__()
        self.title_text = title
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog path-dialog") as dialog:
            dialog.border_title = self.title_text
            yield Label("File path:")
            yield PathInput(self.default, id="path-input", select_on_focus=False)
        yield KeyBar()

    def on_mount(self) -> None:
        field = self.query_one(Input)
        field.cursor_blink = getattr(self.app, "cursor_blink", True)
        field.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        self.dismiss(value or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class UnitModal(TextModal):
    """One unit as the caller may see it; `e` opens its file at its line, as on the KB screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "e",
            "edit",
            "Edit",
            id="unit.edit",
            tooltip="Author view: whole KB. Open the unit's whole file in your editor at its line",
        ),
    ]

    def __init__(self, unit: KnowledgeUnit | None, unit_id: str, *, missing: str = "") -> None:
        super().__init__(f"Unit {unit_id}", unit_markup(unit, unit_id, missing=missing or NOT_VISIBLE))
        self.unit = unit

    def compose(self) -> ComposeResult:
        if self.unit is None:
            yield from super().compose()
            return
        with Vertical(id="dialog", classes="dialog") as dialog:
            dialog.border_title = self.title_text
            with VerticalScroll(id="dialog-body"):
                yield FieldGrid(unit_rows(self.unit), id="unit-fields")
        yield KeyBar()

    def action_edit(self) -> None:
        location = self.unit.location if self.unit is not None else None
        if location is None:
            self.notify("this unit has no file location here", severity="warning")
            return
        self.post_message(OpenInEditor(location.file, location.line))


NO_KB_TEXT = "unit text unavailable: replaying without the KB; pass --kb PATH"
NOT_VISIBLE = "not visible to this caller"


def unit_markup(unit: KnowledgeUnit | None, unit_id: str, *, missing: str = NOT_VISIBLE) -> str:
    """A unit as the caller may see it, or one line saying why there is no text (`missing`)."""
    if unit is None:
        return f"[$warning]{escape(unit_id)}: {escape(missing)}[/]" if unit_id else f"[$warning]{escape(missing)}[/]"
    return "\n".join(f"[b]{name:<10}[/b] {escape(value)}" for name, value in unit_rows(unit))


def unit_rows(unit: KnowledgeUnit) -> list[tuple[str, str]]:
    """A unit's fields as the caller may see them, name and value, the empty ones left out."""
    rows: list[tuple[str, str | None]] = [
        ("id", unit.id),
        ("source", unit.source_id),
        ("role", unit.role.value),
        ("topic", unit.topic),
        ("title", unit.title),
        ("claim" if unit.claim is not None else "procedure", unit.body),
        ("condition", unit.condition),
        ("acts", ", ".join(a.value for a in unit.acts)),
        ("note", unit.utility_note),
        (
            "triple",
            f"{unit.subject} {unit.relation.value} {unit.object} (conf {unit.confidence:g})"
            if unit.relation is not None
            else None,
        ),
        ("acl", ", ".join(unit.acl) or None),
        ("region", unit.region),
        ("effective", effective_text(unit)),
        ("file", f"{unit.location.file}:{unit.location.line}" if unit.location else None),
    ]
    return [(name, value) for name, value in rows if value]


def effective_text(unit: KnowledgeUnit) -> str | None:
    """ "from 2026-02-10", "until 2026-03-31", "2026-02-10 to 2026-03-31": the dates a caller's
    as-of must fall within (ctrl+g changes it); None for a unit in force on every date."""
    start, end = unit.effective_from, unit.effective_to
    if start and end:
        return f"{start.isoformat()} to {end.isoformat()}"
    if start:
        return f"from {start.isoformat()}"
    return f"until {end.isoformat()}" if end else None


class IntentModal(ModalScreen[str | None]):
    """Edit the run's Intent CNL; ctrl+s checks it with the CNL parser and applies it, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "apply", "Apply", id="intent.apply", tooltip="Check the Intent CNL and apply it"),
        Binding("escape", "cancel", "Cancel", id="intent.cancel", tooltip="Close without changing the run"),
        # The question box's new-line key: a hand used to it there would otherwise press it here for nothing.
        Binding("ctrl+j", "new_line", "New line", show=False, id="intent.newline", tooltip="Start a new line"),
    ]

    def __init__(self, cnl: str) -> None:
        super().__init__()
        self.cnl = cnl

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="dialog intent-dialog") as dialog:
            dialog.border_title = "Edit the intent (Intent CNL)"
            yield TextArea(self.cnl, id="intent-text")
            yield Static("", id="intent-problems")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_apply(self) -> None:
        text = self.query_one(TextArea).text
        intents, diagnostics = parse_intents(text, file="<intent>")
        problems = [d.format() for d in diagnostics if d.is_error] or ([] if intents else ["no intent statement"])
        if problems:
            self.query_one("#intent-problems", Static).update(f"[$error]{escape(chr(10).join(problems))}[/]")
            return
        self.dismiss(text)

    def action_new_line(self) -> None:
        self.query_one(TextArea).insert("\n")

    def action_cancel(self) -> None:
        self.dismiss(None)
