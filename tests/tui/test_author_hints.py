"""What the explorer tells a KB author to press, or that it found nothing, holds where the author is."""

from __future__ import annotations

from conftest import make_app
from fakes import RULES, FakeSession
from helpers import ask, record_notifications, settle
from textual import events
from textual.content import Content
from textual.widgets import Static, TextArea

from core.infra.diagnostics import Code, Diagnostic
from core.kb.health import Health, health_of
from core.retrieval.rules import Pattern, Rule, RuleSet
from mrptui.screens.evidence_detail import EvidenceDetailScreen
from mrptui.screens.main import MainScreen
from mrptui.screens.modals import IntentModal, UnitModal
from mrptui.widgets.keybar import KeyBar
from mrptui.widgets.query import PLACEHOLDER, QueryBox

SIZE = (160, 45)


async def reload_notes(pilot, app, session) -> list[str]:
    """What the reload notification says after its " · ": the way to re-run."""
    notes = record_notifications(app)
    session.touch()
    app.lifecycle.poll()
    await settle(pilot)
    return [n.rsplit(" · ", 1)[1] for n in notes if "KB files changed" in n or "KB reloaded" in n]


async def test_the_reload_notification_names_a_rerun_key_that_works_where_the_focus_is(session):
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, leave=False)
        assert isinstance(app.focused, QueryBox)
        assert await reload_notes(pilot, app, session) == ["press F5 to re-run"]
        await pilot.press("escape")  # a panel: single letters are commands
        assert isinstance(app.screen, MainScreen) and not isinstance(app.focused, QueryBox)
        assert await reload_notes(pilot, app, session) == ["press r to re-run"]
        await pilot.press("k")
        assert await reload_notes(pilot, app, session) == ["press / then F5 to re-run"]
        asked = len(session.requests)
        await pilot.press("slash", "f5")  # what it says works
        await settle(pilot)
        assert len(session.requests) == asked + 1 and isinstance(app.screen, MainScreen)


async def test_the_rules_screen_counts_one_rule_in_the_singular(session, monkeypatch):
    monkeypatch.setattr(session, "rules", lambda: [dict(RULES[0])])
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "R")
        title = plain_of(app.screen.query_one("#rules-title", Static))
        assert title.startswith("Rules · 1 rule · "), title


def plain_of(widget: Static) -> str:
    return Content.from_markup(str(widget.content)).plain


def bound_keys(screen) -> set[str]:
    """Each of the window's own commands by its first key, as the key bar spells it."""
    first = (binding.key.split(",")[0] for binding in type(screen).BINDINGS)  # type: ignore[union-attr]
    return {"esc" if key == "escape" else key for key in first}


async def test_the_breakdown_and_the_unit_window_show_their_own_keys_not_the_main_screens(app):
    """A window's key bar is its own: the main screen's keys (`o` Sort, `u` Drop unit) do nothing there."""
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("3", "down", "enter")
        breakdown = app.screen
        assert isinstance(breakdown, EvidenceDetailScreen)
        await pilot.pause()
        bar = breakdown.query_one(KeyBar)
        assert set(bar.keys) == bound_keys(breakdown) | {"^q"} == {"esc", "c", "u", "^q"}
        assert "Drop unit" not in str(bar.render()) and "Sort" not in str(bar.render())
        await pilot.press("u")  # as it says: the unit's window
        assert isinstance(app.screen, UnitModal)
        await pilot.pause()
        assert set(app.screen.query_one(KeyBar).keys) == {"esc", "c", "e", "^q"}


async def test_a_kb_search_that_finds_nothing_says_it_searched_the_callers_view(app):
    async with app.run_test(size=SIZE) as pilot:
        notes = record_notifications(app)
        await pilot.press("escape", "k", "s", *"no-such-unit", "enter")
        await settle(pilot)
        assert [n for n in notes if "matches" in n] == [
            "no unit in this caller's view matches “no-such-unit” (units outside it, by Acl, Region or dates,"
            " are not listed; ctrl+g reads the KB as another caller)"
        ]


class BrokenRulesSession(FakeSession):
    """The rules file stops parsing on the next reload; every unit still validates."""

    broken = False

    def reload(self):
        self.broken = True
        return super().reload()

    def health(self, caller=None) -> Health:
        if not self.broken:
            return super().health(caller)
        error = Diagnostic(code=Code.INVALID_JSON, message="Expecting value", file="config/thinkingdb.json", line=12)
        return health_of([], RuleSet(diagnostics=(error,), file_valid=False), [])


async def test_a_broken_rules_file_is_not_reported_as_withdrawn_units():
    session = BrokenRulesSession(diagnostics=[])
    app = make_app(session)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        notes = record_notifications(app)
        session.touch()
        app.lifecycle.poll()
        await settle(pilot)
        assert notes == [
            "KB files changed: rules file invalid: running with 0 rules — F8 lists them · press r to re-run"
        ]


async def test_a_narrow_rules_screen_cuts_its_title_with_a_sign_and_keeps_the_rule_file_count(app):
    async with app.run_test(size=(70, 24)) as pilot:
        await pilot.press("escape", "R")
        await settle(pilot)
        counts = app.screen.query_one("#rules-counts", Static)
        assert plain_of(counts) == "rule file: 1 error"
        assert counts.region.right <= 70 and counts.region.width >= len("rule file: 1 error")
        title = app.screen.query_one("#rules-title", Static)
        shown = "".join(segment.text for segment in title.render_line(0)).rstrip()
        assert shown.endswith("…") and len(shown) == title.region.width  # the title gave way, and says so


async def test_ctrl_j_starts_a_new_line_in_the_intent_editor_as_in_the_question_box(app):
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("i")
        assert isinstance(app.screen, IntentModal)
        area = app.screen.query_one("#intent-text", TextArea)
        area.text = '@i1 intent describe "Orion"'
        area.move_cursor(area.document.end)
        await pilot.press("ctrl+j", *"@i2")
        assert area.text == '@i1 intent describe "Orion"\n@i2'


async def test_the_kb_search_box_sits_whole_above_the_key_bar(app):
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("escape", "k", "s")
        await pilot.pause()
        search = app.screen.query_one("#kb-search")
        bar = app.screen.query_one(KeyBar)
        assert search.has_focus and search.region.height == 3
        assert search.region.bottom <= bar.region.y  # its bottom edge was drawn under the key bar


async def test_a_command_letter_typed_ahead_of_a_question_runs_as_a_command_not_at_the_questions_end(app, session):
    """On the timeline `p` pins; `ump` then starts a question. Typed fast (tmux send-keys, a paste),
    the `p` was looked up again after `u` had moved the focus to the box, and typed there: "umpp"."""
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot)
        await pilot.press("2")  # the timeline, its last row: `p` pins its plugin
        asked = len(session.requests)
        for key in "pump":  # all queued before the first is handled, as a terminal delivers them
            app.post_message(events.Key(key, key))
        await settle(pilot)
        box = app.screen.query_one(QueryBox)
        assert box.text == "ump"
        assert len(session.requests) == asked + 1 and session.requests[-1].pins  # the pin re-ran the question


def test_one_last_good_rule_is_said_in_the_singular():
    rule = Rule(id="r1", when=[Pattern(s="?x", r="uses", o="?y")], then=Pattern(s="?x", r="has", o="?y"), weight=0.9)
    error = Diagnostic(code=Code.INVALID_JSON, message="Expecting value", file="config/thinkingdb.json", line=12)
    health = health_of([], RuleSet(rules=(rule,), diagnostics=(error,), file_valid=False), [])
    assert health.summary.startswith("rules file invalid: running with 1 rule (the last good one) — ")


async def test_the_question_box_hint_is_never_cut_at_80_columns(session):
    app = make_app(session)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        box = app.screen.query_one(QueryBox)
        assert box.placeholder == "Ask a question — Enter runs it · ctrl+j new line · Esc leaves the box"
        assert len(box.placeholder) < box.scrollable_content_region.width
        await pilot.resize_terminal(160, 45)
        await pilot.pause()
        assert box.placeholder == PLACEHOLDER
