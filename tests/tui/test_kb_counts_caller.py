"""Issue 35, case 11: the KB screen's header counts what the caller may count, as the status line
does; the validation pane below (author view: whole KB) still lists the restricted unit's error."""

from __future__ import annotations

from conftest import make_app
from helpers import settle
from textual.widgets import OptionList, Static

from core.kernel.session import Session

PUBLIC = "## Context Unit lobby::chunk-000::unit-000\nRole: Definition\nTopic: Lobby\nClaim: The lobby opens at nine.\n"
RESTRICTED = (
    "## Context Unit vault::chunk-000::unit-000\nRole: Definition\nTopic: Vault\nClaim: The code is 4471.\n"
    "Acl: staff\nEffectiveFrom: 2026-13-45\n"
)


async def test_a_restricted_units_bad_date_is_not_counted_in_the_public_callers_header(tmp_path, monkeypatch):
    monkeypatch.setenv("MRPTUI_NO_CACHE", "1")
    (tmp_path / "lobby.md").write_text(PUBLIC)
    (tmp_path / "vault.md").write_text(RESTRICTED)
    app = make_app(Session.open([tmp_path]))
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("escape", "k")
        await settle(pilot)
        screen = app.screen
        assert (app.kb.health.errors, app.kb.health.warnings) == (0, 0)
        assert "no errors" in str(screen.query_one("#kb-counts", Static).content)
        # The author's pane lists it.
        assert screen.query_one("#kb-diagnostics", OptionList).option_count == 1
