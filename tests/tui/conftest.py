"""TUI test fixtures: colour on, no cursor blink, a scripted session, a fixed theme and no clocks."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import textual._wait
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

# NO_COLOR is read when an App is created: removing it keeps snapshots in colour.
os.environ.pop("NO_COLOR", None)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_kb import CALLER  # noqa: E402
from fakes import FakeSession  # noqa: E402
from paint import paint_only_when_needed  # noqa: E402

from mrptui.app import ExplorerApp  # noqa: E402


@pytest.fixture(autouse=True)
def _no_blink(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The 0.5 s cursor blink timer makes snapshots flaky; the app also takes cursor_blink=False.
    No test reads the user's editor settings or writes into their export folder."""
    monkeypatch.setenv("MRPTUI_EXPORTS", str(tmp_path / "exports"))
    monkeypatch.setattr(Input, "_toggle_cursor", lambda self: None)
    monkeypatch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("MRPTUI_EDITOR", raising=False)
    monkeypatch.delenv("TMUX", raising=False)  # the copy notification adds a hint inside tmux


@pytest.fixture(autouse=True)
def _finer_idle_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pilot waits for the app to go idle after every key (textual._wait.wait_for_idle): it sleeps in
    steps of 20 ms until one step used under 1 ms of CPU, so every key cost at least 40 ms. Steps of
    5 ms with the same ratio of CPU to wall time detect the same idleness four times sooner."""
    monkeypatch.setattr(textual._wait, "SLEEP_GRANULARITY", textual._wait.SLEEP_GRANULARITY / 4)
    monkeypatch.setattr(textual._wait, "SLEEP_IDLE", textual._wait.SLEEP_IDLE / 4)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "paints: a Pilot test that reads what a widget worked out while drawing")


@pytest.fixture(autouse=True)
def _paint_only_when_needed(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """No paint after every key: once at the end of each run_test, and from the first mouse event on
    (tests/tui/paint.py); after every key as users' runs do for a test marked `paints`."""
    if request.node.get_closest_marker("paints") is None:
        paint_only_when_needed(monkeypatch)


def make_app(session: FakeSession | None = None, **kwargs) -> ExplorerApp:
    """The explorer as tests see it: fixed theme, no durations, no file polling, no blink, no user keymap.
    Given an `opener` (and no session), it opens its session in a worker as the CLI's does."""
    options = dict(
        theme="textual-dark",
        show_durations=False,
        cursor_blink=False,
        poll_interval=0,
        layout_path=None,
        clock=lambda: 0.0,
        kb_label="sample_kb",
        keymap_path=None,
        break_before_costly=False,
    )
    options.update(kwargs)
    if session is None and options.get("opener") is None:
        session = FakeSession()
    return ExplorerApp(session, CALLER, **options)


@pytest_asyncio.fixture(loop_scope="module")
async def shared(shared_app: Pilot) -> AsyncIterator[Pilot]:
    """The module's one running explorer (tests/tui/shared_app.py), reset after the test."""
    from shared_app import back_to_main  # it imports make_app from here

    yield shared_app
    await back_to_main(shared_app)


@pytest.fixture
def session() -> FakeSession:
    return FakeSession()


@pytest.fixture
def app(session: FakeSession) -> ExplorerApp:
    return make_app(session)
