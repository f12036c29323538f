"""The virtual table (mrptui/widgets/virtual_table.py) and the KB screen on a large view: only
rows on screen are made, every key moves the cursor, and search runs in a worker."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence

import pytest
from conftest import make_app
from fake_kb import UNITS
from fakes import FakeSession
from helpers import record_notifications, until_quiet
from textual.app import App, ComposeResult

from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller, KnowledgeUnit, Role, SourceLocation
from mrptui.screens.kb_columns import WIDTH_READS, content_widths
from mrptui.widgets.virtual_table import VirtualTable

ROWS = 1_000_000


class TableApp(App):
    def __init__(self) -> None:
        super().__init__()
        self.made: list[int] = []
        self.selected: list[int] = []
        self.highlighted: list[int] = []

    def compose(self) -> ComposeResult:
        yield VirtualTable(id="table")

    def on_mount(self) -> None:
        self.query_one(VirtualTable).fill([("row", 12), ("square", 14)], ROWS, self.cells)
        self.query_one(VirtualTable).focus()

    def cells(self, index: int) -> list[str]:
        self.made.append(index)
        return [f"row {index}", str(index * index)]

    def on_virtual_table_row_selected(self, event: VirtualTable.RowSelected) -> None:
        self.selected.append(event.cursor_row)

    def on_virtual_table_row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        self.highlighted.append(event.cursor_row)


@pytest.mark.paints  # the rows are made as they are drawn
async def test_a_million_rows_make_only_the_rows_on_screen():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        table = app.query_one(VirtualTable)
        assert table.row_count == ROWS and set(app.made) <= set(range(11))
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_row == ROWS - 1 and app.highlighted[-1] == ROWS - 1
        assert max(app.made) == ROWS - 1 and len(set(app.made)) < 40
        assert f"row {ROWS - 1}" in "\n".join(line.text for line in (table.render_line(y) for y in range(12)))


async def test_every_key_moves_the_cursor_and_enter_selects():
    app = TableApp()
    async with app.run_test(size=(40, 12)) as pilot:
        table = app.query_one(VirtualTable)
        await pilot.press("down", "down")
        assert table.cursor_row == 2
        await pilot.press("up")
        assert table.cursor_row == 1
        await pilot.press("pagedown")
        page = table.cursor_row - 1
        assert page > 1
        await pilot.press("pageup")
        assert table.cursor_row == 1
        await pilot.press("up", "up")  # stops at the first row
        assert table.cursor_row == 0
        await pilot.press("end", "down")  # and at the last
        assert table.cursor_row == ROWS - 1
        await pilot.press("home", "enter")
        assert table.cursor_row == 0 and app.selected == [0]
        await pilot.click(VirtualTable, offset=(3, 3))  # the header is line 0
        assert table.cursor_row == 2


class LazyUnits(Sequence[KnowledgeUnit]):
    """A large view whose units are made on read, counting how many were read."""

    def __init__(self, size: int):
        self.size = size
        self.read: set[int] = set()

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.size))]
        if index < 0:
            index += self.size
        if not 0 <= index < self.size:
            raise IndexError(index)
        self.read.add(index)
        return coast_unit(index)


@pytest.fixture(autouse=True, scope="module")
def _coast_units_made_once() -> Iterator[None]:
    """Four tests search all 60,000 units (~1 CPU s of KnowledgeUnit validation each time): the
    module makes each unit once; every view still counts its own reads."""
    yield
    coast_unit.cache_clear()


@functools.cache
def coast_unit(index: int) -> KnowledgeUnit:
    topic = "lighthouse lens" if index % 997 == 0 else f"tide table {index}"
    return KnowledgeUnit(
        id=f"coast::chunk-{index // 100:04d}::unit-{index % 100:03d}",
        source_id="coast",
        chunk_id=f"coast::chunk-{index // 100:04d}",
        role=Role.DEFINITION,
        topic=topic,
        claim=f"{topic} is noted.",
    )


class BigSession(FakeSession):
    def __init__(self, size: int):
        super().__init__(diagnostics=[])
        self.big = LazyUnits(size)

    def units(self, caller: Caller) -> Sequence[KnowledgeUnit]:
        return self.big


@contextlib.asynccontextmanager
async def big_kb_screen(session: BigSession):
    """The explorer over `session`, on its KB screen."""
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("escape", "k")
        await pilot.pause()
        yield app, pilot


async def test_the_kb_screen_opens_a_large_view_without_reading_it_and_searches_in_a_worker():
    session = BigSession(60_000)
    async with big_kb_screen(session) as (app, pilot):
        screen = app.screen
        assert screen.query_one("#kb-units", VirtualTable).row_count == 60_000
        # The units read for the column widths and the rows on screen (each reads its predecessor too).
        assert len(session.big.read) <= WIDTH_READS + 80
        await pilot.press("s", *"lighthouse", "enter")
        await until_quiet(pilot)
        await pilot.pause()
        expected = list(range(0, 60_000, 997))
        assert screen.unit_search.hits == expected and screen.unit_search.searched == 60_000
        assert screen.query_one("#kb-units", VirtualTable).cursor_row == 0
        await pilot.press("n")
        assert screen.query_one("#kb-units", VirtualTable).cursor_row == 997
        await pilot.press("f")
        assert screen.query_one("#kb-units", VirtualTable).row_count == len(expected)
        assert screen.selected.topic == "lighthouse lens"


async def test_a_newer_search_replaces_one_still_running():
    session = BigSession(60_000)
    app = make_app(session)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("escape", "k")
        screen = app.screen
        await pilot.press("s", *"tide table 59999", "enter", "ctrl+f", "ctrl+u", *"lighthouse", "enter")
        await until_quiet(pilot)
        await pilot.pause()
        assert screen.unit_search.text == "lighthouse" and screen.unit_search.hits == list(range(0, 60_000, 997))


async def test_a_small_view_is_searched_at_once(app):
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("escape", "k", "s", *"airflow", "enter")
        assert app.screen.unit_search.hits and app.screen.unit_search.searched == len(UNITS)


class BrokenUnits(LazyUnits):
    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, int) and index == 30_001:  # not a row the width sample reads
            raise OSError("segment vanished")
        return super().__getitem__(index)


async def test_a_search_that_cannot_read_a_unit_says_so():
    session = BigSession(60_000)
    session.big = BrokenUnits(60_000)
    app = make_app(session)
    notes = record_notifications(app)
    async with app.run_test(size=(140, 40)) as pilot:
        await pilot.press("escape", "k", "s", *"lighthouse", "enter")
        await until_quiet(pilot)
        await pilot.pause()
        assert any("search stopped: OSError: segment vanished" in note for note in notes)
        assert (
            app.screen.unit_search.searched < 60_000 and app.screen.unit_search.hits
        )  # the matches found before it stay


def _unit(index: int, *, unit_id: str = "", file: str = "coast.md") -> KnowledgeUnit:
    return KnowledgeUnit(
        id=unit_id or f"coast::chunk-{index // 100:04d}::unit-{index % 100:03d}",
        source_id="coast",
        chunk_id=f"coast::chunk-{index // 100:04d}",
        role=Role.DEFINITION,
        topic=f"tide {index}",
        claim=f"tide {index} is noted.",
        location=SourceLocation(file=file, line=index + 1, col=1),
    )


def test_id_role_and_file_line_widths_come_from_every_unit_of_a_large_view_without_reading_it() -> None:
    count = 3 * WIDTH_READS
    odd = 3 * (WIDTH_READS // 2) + 1  # between two of the units read for topic and triple
    long_id = "coast::an-unusually-long-chunk-name::unit-001"
    units = [
        _unit(i, unit_id=long_id if i == odd else "", file="deep/folder/tides.md" if i == odd else "coast.md")
        for i in range(count)
    ]
    units[odd + 1] = units[odd + 1].model_copy(update={"role": Role.CONSTRAINT})
    view = KnowledgeBase.from_units(units).view(Caller()).units
    widths = content_widths(view, marked=False)
    assert len(widths.read) == WIDTH_READS and odd not in widths.read and odd + 1 not in widths.read
    unit, role, topic, _, where = widths.widths
    assert unit == len(long_id) and role == len("Constraint") and where == len(f"deep/folder/tides.md:{odd + 1}")
    assert topic == max(len(units[p].topic) for p in widths.read)  # topic and triple: from the units read
    assert content_widths(view, marked=True).widths[0] == len(long_id) + 2  # the search's mark before an id


async def test_the_kb_screen_says_when_its_topic_and_triple_widths_come_from_fewer_units_than_it_lists():
    async with big_kb_screen(BigSession(60_000)) as (app, pilot):
        subtitle = str(app.screen.query_one("#kb-units", VirtualTable).border_subtitle)
        assert subtitle == f"60000 units · topic, triple widths from {WIDTH_READS:,} read"
        await pilot.press("escape")
    small = make_app()
    async with small.run_test(size=(140, 40)) as pilot:
        await pilot.press("escape", "k")
        await pilot.pause()
        table = small.screen.query_one("#kb-units", VirtualTable)
        assert table.border_subtitle == f"{len(UNITS)} units"
        assert table._columns[0][1] == max(len(unit.id) for unit in UNITS)
