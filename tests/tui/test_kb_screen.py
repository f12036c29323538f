"""Pilot tests: the KB screen (units, diagnostics, search, why-not, editing) and reloading."""

from __future__ import annotations

import pytest
from conftest import make_app
from fakes import FakeSession
from helpers import QUESTION, ask, plain_of, record_notifications, settle
from shared_app import shared_app_of
from textual.widgets import OptionList, Static

from core.infra.diagnostics import Code, Diagnostic, Severity
from mrptui.screens.modals import TextModal, UnitModal
from mrptui.widgets.virtual_table import VirtualTable

SIZE = (160, 45)
# Tests that open a screen or window on a fresh explorer, read it and close it share one (each
# leaves it as it started: tests/tui/shared_app.py).
shared_app = shared_app_of(SIZE)
on_the_shared_app = pytest.mark.asyncio(loop_scope="module")


@on_the_shared_app
async def test_kb_screen_lists_units_and_errors(shared):
    pilot, app = shared, shared.app
    await pilot.press("escape", "k")
    screen = app.screen
    assert type(screen).__name__ == "KBScreen"
    assert screen.query_one("#kb-units", VirtualTable).row_count == 6
    assert screen.query_one("#kb-diagnostics", OptionList).option_count == 2
    assert plain_of(screen.query_one("#kb-counts", Static)) == "2 errors"
    await pilot.press("escape", "f2")
    assert type(app.screen).__name__ == "KBScreen"


async def test_kb_header_pane_and_status_line_count_the_same_diagnostics():
    """A KB edited into errors also lists its withdrawn-units warning: every view counts both the
    same way, and at 80 columns the header keeps the counts (the title is cut instead)."""
    from fake_kb import DIAGNOSTICS

    withdrawn = Diagnostic(
        code=Code.UNITS_WITHDRAWN,
        message="units this file held before are withdrawn",
        file="sample_kb/tools.md",
        severity=Severity.WARNING,
    )
    app = make_app(
        FakeSession(diagnostics=[*DIAGNOSTICS, withdrawn]), kb_label="/a/rather/long/path/to/the/knowledge/base/folder"
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("escape", "k")
        await settle(pilot)
        screen = app.screen
        assert plain_of(screen.query_one("#kb-counts", Static)) == "2 errors, 1 warning"
        assert screen.query_one("#kb-diagnostics", OptionList).border_title == "Validation: 2 errors, 1 warning"
        assert (app.kb.health.errors, app.kb.health.warnings) == (2, 1)
        counts = screen.query_one("#kb-counts", Static).region
        assert counts.right <= 80 and counts.width >= len("2 errors, 1 warning")


@on_the_shared_app
async def test_kb_search_next_previous_and_filter(shared):
    pilot, app = shared, shared.app
    await pilot.press("escape", "k", "s")
    screen = app.screen
    await pilot.press(*"airflow", "enter")
    assert screen.unit_search.matches == [1, 2]  # the comparison unit and the Airflow unit
    table = screen.query_one("#kb-units", VirtualTable)
    assert table.cursor_row == 1
    await pilot.press("n")
    assert table.cursor_row == 2
    await pilot.press("n")
    assert table.cursor_row == 1
    await pilot.press("N")
    assert table.cursor_row == 2
    await pilot.press("f")
    assert screen.unit_search.filtered and table.row_count == 2
    await pilot.press("f")
    assert table.row_count == 6


async def test_why_not_uses_the_last_question(app, session):
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notifications(app)
        await pilot.press("escape", "k", "w")
        assert any("ask a question first" in n for n in notes)
        await pilot.press("escape")
        await ask(pilot)
        await pilot.press("k", "down", "w")
        assert isinstance(app.screen, TextModal)
        assert session.why_not_calls == [("ops::chunk-002::unit-001", QUESTION)]
        assert "cut by gap: 0.21 < 0.35 × top 0.80" in app.screen.plain


async def test_a_wrapped_why_not_reason_stays_under_its_first_line(app):
    async with app.run_test(size=(80, 32)) as pilot:
        await ask(pilot)
        await pilot.press("k", "down", "w")
        await pilot.pause()
        lanes = list(app.screen.query("#why-not-reasons .field-name"))
        reasons = list(app.screen.query("#why-not-reasons .field-value"))
        support = reasons[next(n for n, lane in enumerate(lanes) if "support" in str(lane.content))]
        widest_lane = max(lane.region.right for lane in lanes)
        assert support.region.height >= 2  # it wraps at this width
        assert all(reason.region.x > widest_lane for reason in reasons)  # every line, the wrapped ones too


@on_the_shared_app
async def test_edit_opens_the_editor_at_the_line(shared):
    pilot, app = shared, shared.app
    calls = []
    notes = record_notifications(app)
    await pilot.press("escape", "k", "e")  # $EDITOR is unset in tests
    assert any("set $EDITOR" in n for n in notes)
    app.open_in_editor = lambda file, line: calls.append((file, line))  # type: ignore[method-assign]
    await pilot.press("down", "e")
    await pilot.press("tab", "e")  # the validation errors table
    assert calls == [("sample_kb/ops.md", 12), ("config/thinkingdb.json", 41)]


async def test_file_change_reloads_and_shows_new_errors(app, session):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        await pilot.press("k")
        app.lifecycle.poll()  # nothing changed
        await settle(pilot)
        assert session.reloads == 0
        new_error = Diagnostic(
            code=Code.MALFORMED_LINE, message="line is not Field: value", file="sample_kb/new.md", line=2
        )
        session.touch(diagnostics=[new_error])
        app.lifecycle.poll()
        await settle(pilot)
        assert session.reloads == 1 and app.kb_generation == 1
        # On the KB screen `r` would start a question: the hint names keys that re-run from here.
        assert any("1 KB error;" in n and "press / then F5 to re-run" in n for n in notes)
        listing = app.screen.query_one("#kb-diagnostics", OptionList)
        assert listing.option_count == 1 and "sample_kb/new.md:2:1" in str(listing.get_option_at_index(0).prompt)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert session.reloads == 2


def test_a_unit_row_keeps_the_file_name_and_line_when_its_place_is_cut():
    from core.units import KnowledgeUnit
    from mrptui.screens.kb_columns import unit_cells

    unit = KnowledgeUnit.model_validate(
        {
            "id": "u1",
            "source_id": "s",
            "role": "Definition",
            "chunk_id": "c",
            "topic": "t",
            "claim": "x",
            "location": {"file": "/very/long/folder/of/the/kb/howto/deploy.md", "line": 128},
        }
    )
    where = unit_cells(unit, False, True, None, where_width=16)[-1].plain
    assert where == "…o/deploy.md:128" and len(where) == 16
    assert unit_cells(unit, False, True, None)[-1].plain.endswith("/howto/deploy.md:128")


async def test_a_wrapped_unit_field_stays_under_its_first_line(app):
    async with app.run_test(size=(60, 30)) as pilot:
        await pilot.press("escape", "k", "down", "enter")
        await pilot.pause()
        assert isinstance(app.screen, UnitModal)
        names = list(app.screen.query("#unit-fields .field-name"))
        values = list(app.screen.query("#unit-fields .field-value"))
        claim = values[next(n for n, name in enumerate(names) if "claim" in str(name.content))]
        assert claim.region.height >= 2  # it wraps at this width
        assert all(value.region.x > max(name.region.right for name in names) for value in values)


def _shown_fields(grid) -> list[tuple[str, object]]:
    """(name, value cell) of each row the grid shows."""
    names = [plain_of(cell) for cell in grid.query(".field-name") if cell.display]
    return list(zip(names, [cell for cell in grid.query(".field-value") if cell.display], strict=True))


@pytest.mark.parametrize("size", [(80, 24), (100, 40)])
async def test_a_selected_units_wrapped_value_stays_under_its_first_line(size):
    """The selected-unit pane is a two-column FieldGrid, as the unit and why-not windows are: a
    claim too long for the pane wraps under its own first line, not back under the field names;
    moving the cursor shows the next unit's fields, and only its own."""
    from fake_kb import U_DBT, U_LUIGI

    from mrptui.widgets.field_grid import FieldGrid

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.press("escape", "k", "down", "down", "down", "down")
        await settle(pilot)
        assert app.screen.selected.id == U_LUIGI
        grid = app.screen.query_one("#kb-detail-fields", FieldGrid)
        fields = dict(_shown_fields(grid))
        claim = fields["claim"]
        assert plain_of(claim) == "Luigi is a batch workflow tool first built at Spotify." and claim.size.height > 1
        names_end = max(cell.virtual_region.right for cell in grid.query(".field-name"))
        assert {cell.virtual_region.x for cell in fields.values()} == {claim.virtual_region.x}
        assert claim.virtual_region.x > names_end
        await pilot.press("down")  # dbt has a triple: one row more
        await settle(pilot)
        assert app.screen.selected.id == U_DBT and "triple" in dict(_shown_fields(grid))
        await pilot.press("up")
        await settle(pilot)
        assert [name for name, _ in _shown_fields(grid)] == list(fields)
