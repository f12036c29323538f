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


def shared_pilot(size: tuple[int, int]):
    """A module-scoped fixture: a pilot on one explorer of `size` for the module's tests, which
    must each leave it on the main screen (`back_to_main` checks that after each test)."""

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
    """After a test: close what it left open, so a failed test does not fail the ones after it."""
    while not isinstance(pilot.app.screen, MainScreen):
        pilot.app.pop_screen()
        await pilot.pause()
