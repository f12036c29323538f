"""One running explorer shared by a module's read-only Pilot tests (docs/testing.md): an app start
costs ~0.3–0.6 CPU s of textual's styling and drawing, and a test that only opens a screen on it,
reads it and closes it again proves the same on a shared app as on its own.

The app lives in the module's event loop (`loop_scope="module"` on the fixture and on each test
that uses it). It starts before the function-scoped autouse fixtures of the first test run, so it
gets its own private environment here, as those give each test theirs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from conftest import make_app
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from mrptui.screens.main import MainScreen
from mrptui.widgets.query import QueryBox


def shared_app_of(size: tuple[int, int]):
    """A module-scoped fixture, to be named `shared_app` in the module: a pilot on one explorer of
    `size`. Tests take the `shared` fixture (tests/tui/conftest.py), which resets it after each."""

    @pytest_asyncio.fixture(scope="module", loop_scope="module")
    async def fixture(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Pilot]:
        home = tmp_path_factory.mktemp("shared-app")
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("MRPTUI_EXPORTS", str(home / "exports"))
            patch.setenv("MRPTUI_HISTORY", str(home / "history"))
            patch.setenv("XDG_DATA_HOME", str(home / "xdg"))
            for name in ("EDITOR", "VISUAL", "MRPTUI_EDITOR", "TMUX"):
                patch.delenv(name, raising=False)
            patch.setattr(Input, "_toggle_cursor", lambda self: None)
            patch.setattr(TextArea, "_toggle_cursor_blink_visible", lambda self: None)
            app = make_app()
            async with app.run_test(size=size) as pilot:
                yield pilot

    return fixture


async def back_to_main(pilot: Pilot) -> None:
    """After a test: close what it left open, take back the methods it replaced on the app, and
    leave an empty question box focused, as a fresh app starts, so a failed test does not fail the
    ones after it."""
    app = pilot.app
    while not isinstance(app.screen, MainScreen):
        app.pop_screen()
        await pilot.pause()
    for name in [name for name, value in vars(app).items() if callable(value) and hasattr(type(app), name)]:
        delattr(app, name)  # e.g. record_notifications' notify
    box = app.screen.query_one(QueryBox)
    box.value = ""
    box.focus()
    await pilot.pause()
