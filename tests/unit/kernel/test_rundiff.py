"""The run diff model: facts paired by what they are about, rank and score moves, colours' inputs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.kernel.rundiff import SECTIONS, diff_runs
from tests.support.tide_runs import GAUGE, candidates, run


def rows_of(diff, section):
    return [(row.left, row.right, row.change, row.note) for row in diff.section(section)]


def test_identical_runs_have_no_changed_rows():
    diff = diff_runs(run(), run())
    assert diff.changes == 0
    assert {row.section for row in diff.rows} == set(SECTIONS)
    assert all(row.left == row.right and row.side("left") == "same" for row in diff.rows)
    assert not any(line.startswith(("- ", "+ ")) for line in diff.plain().splitlines())


def test_rank_moves_and_score_deltas_are_named():
    left = run(scored=candidates((1, 0.9, True), (2, 0.7, True), (3, 0.5, True)))
    right = run(scored=candidates((2, 0.95, True), (1, 0.9, True), (3, 0.5, True)))
    evidence = diff_runs(left, right).section("Evidence")
    by_unit = {row.right.split()[1]: row for row in evidence[1:]}
    assert by_unit[GAUGE.format(2)].note == "↑1 · score +0.250" and by_unit[GAUGE.format(2)].change == "changed"
    assert by_unit[GAUGE.format(1)].note == "↓1" and by_unit[GAUGE.format(1)].change == "changed"
    assert by_unit[GAUGE.format(3)].change == "same" and by_unit[GAUGE.format(3)].note == ""
    # The right run's rank order: the new top unit comes first.
    assert [row.right.split()[1] for row in evidence[1:]] == [GAUGE.format(n) for n in (2, 1, 3)]


def test_a_score_move_below_the_shown_precision_is_no_change():
    left = run(scored=candidates((1, 0.9, True)))
    right = run(scored=candidates((1, 0.9002, True)))
    assert diff_runs(left, right).changes == 0


def test_new_and_dropped_evidence():
    left = run(scored=candidates((1, 0.9, True), (2, 0.7, True), (3, 0.3, False)))
    right = run(scored=candidates((1, 0.9, True), (3, 0.8, True), (2, 0.2, False), cut="min_score"))
    evidence = diff_runs(left, right).section("Evidence")
    assert evidence[0].left.startswith("intent 0 via kb-fast: 2 kept of 3")
    new = next(row for row in evidence if GAUGE.format(3) in row.right)
    dropped = next(row for row in evidence if GAUGE.format(2) in row.left)
    assert (new.change, new.note) == ("added", "new (was cut: gap)")
    assert (dropped.change, dropped.note) == ("removed", "dropped (cut: min_score)")
    assert dropped.right.endswith("· cut: min_score") and dropped.side("right") == "removed"
    assert evidence[-1] is dropped  # units only the left run kept come after the right run's ranks


def test_evidence_of_a_unit_only_one_run_scored():
    left = run(scored=candidates((1, 0.9, True)))
    right = run(scored=candidates((1, 0.9, True), (4, 0.6, True)))
    row = next(r for r in diff_runs(left, right).section("Evidence") if GAUGE.format(4) in r.right)
    assert (row.left, row.change, row.note) == ("", "added", "new")
    assert row.side("left") == "empty" and row.side("right") == "added"


def test_changed_plan_pairs_stage_by_stage():
    left = run()
    right = run(kb_order=("kb-balanced", "kb-fast"), kb_reason="kb-balanced pinned by the user")
    plan = rows_of(diff_runs(left, right), "Plan")
    assert [change for *_, change, _ in plan] == ["same", "same", "changed", "same"]
    assert plan[2][:2] == (
        "kb: kb-fast, kb-balanced — cheap first",
        "kb: kb-balanced, kb-fast — kb-balanced pinned by the user",
    )


def test_an_intervention_is_one_added_row_and_shifts_nothing():
    diff = diff_runs(run(), run(pins={"kb": "kb-fast"}, intervene=True))
    attempts = diff.section("Attempts")
    added = [row for row in attempts if row.changed]
    assert [(row.left, row.right, row.change) for row in added] == [
        ("", "✎ kb-fast pinned first for kb by the user", "added")
    ]
    assert all(row.left == row.right for row in attempts if not row.changed)
    assert rows_of(diff, "Request")[3][:3] == ("pinned: none", "pinned: kb=kb-fast", "changed")


def test_attempts_pair_by_plugin_including_not_reached_rows():
    """The kb plugins swap order: each stays on one row with itself, not with the other plugin."""
    left = run()
    right = run(kb_order=("kb-balanced", "kb-fast"))
    assert rows_of(diff_runs(left, right), "Attempts") == [
        ("plan r0 by planner-default", "plan r0 by planner-default", "same", ""),
        ("sd sd-symbolic success: 1 intent", "sd sd-symbolic success: 1 intent", "same", ""),
        (
            "kb kb-balanced skipped: not reached: kb-fast was sufficient",
            "kb kb-balanced success: 2 kept",
            "changed",
            "",
        ),
        ("kb kb-fast success: 2 kept", "kb kb-fast skipped: not reached: kb-balanced was sufficient", "changed", ""),
        ("gs gs-symbolic success: answered", "gs gs-symbolic success: answered", "same", ""),
    ]


def test_a_fact_only_the_left_run_has_stays_after_what_it_followed():
    left = run(first_kb="failed")
    right = run(kb_order=("kb-fast", "kb-dense"))
    attempts = diff_runs(left, right).section("Attempts")
    texts = [(row.left, row.change) for row in attempts]
    assert texts.index(("↩ L1 next candidate (kb-fast): too few", "replaced")) == 3
    assert attempts[3].right == "kb kb-dense skipped: not reached: kb-fast was sufficient"


def test_a_backtrack_only_on_one_side():
    diff = diff_runs(run(), run(first_kb="failed"))
    attempts = diff.section("Attempts")
    backtrack = next(row for row in attempts if row.right.startswith("↩"))
    assert backtrack.right == "↩ L1 next candidate (kb-fast): too few"
    assert backtrack.change == "replaced" and backtrack.left.startswith("kb kb-balanced skipped")
    assert next(row for row in attempts if row.left.startswith("kb kb-fast")).change == "changed"


def test_replaced_rows_colour_each_side_by_what_it_lost_or_gained():
    left = run(kb_order=("kb-fast", "kb-thinkingdb"))
    right = run(kb_order=("kb-balanced", "kb-dense"))
    replaced = [row for row in diff_runs(left, right).section("Attempts") if row.change == "replaced"]
    assert replaced and all(row.side("left") == "removed" and row.side("right") == "added" for row in replaced)


def test_answer_text_and_status():
    long_answer = "Gauge 1 reads the spring tide " + "and the neap tide " * 12
    diff = diff_runs(run(), run(answer=long_answer, status="weak"))
    answer = rows_of(diff, "Answer")
    assert answer[0][:3] == ("status: grounded", "status: weak", "changed")
    assert answer[1][:3] == ("Gauge 1 reads the spring tide at the harbour mouth.", long_answer, "changed")
    assert answer[2][2] == "same"  # the citation


def test_an_unfinished_run_reads_running_and_has_no_answer():
    diff = diff_runs(run(), run(finish_val=False))
    attempts = diff.section("Attempts")
    assert attempts[-1].right == "gs gs-symbolic running" and attempts[-1].change == "changed"
    assert rows_of(diff, "Answer")[0][:3] == ("status: grounded", "no answer (run running)", "changed")


def test_plain_text_marks_sides():
    plain = diff_runs(run(), run(pins={"kb": "kb-fast"})).plain()
    assert "- pinned: none" in plain and "+ pinned: kb=kb-fast" in plain
    assert "  question: Which gauge reads the spring tide?" in plain
    assert [line for line in plain.splitlines() if line.startswith("## ")] == [f"## {s}" for s in SECTIONS]


def test_empty_event_lists_still_give_every_section():
    diff = diff_runs([], [])
    assert {row.section for row in diff.rows} == set(SECTIONS) and diff.changes == 0


@st.composite
def rankings(draw):
    units = draw(st.lists(st.integers(1, 12), min_size=0, max_size=8, unique=True))
    scores = sorted(
        draw(st.lists(st.floats(0.0, 2.0, allow_nan=False), min_size=len(units), max_size=len(units))), reverse=True
    )
    kept = draw(st.lists(st.booleans(), min_size=len(units), max_size=len(units)))
    return candidates(*zip(units, scores, kept, strict=True))


@settings(max_examples=60, deadline=None)
@given(rankings(), rankings())
def test_every_kept_unit_is_one_row_and_arrows_follow_ranks(left, right):
    diff = diff_runs(run(scored=left), run(scored=right))
    kept = {c.id for c in left if c.kept} | {c.id for c in right if c.kept}
    unit_rows = diff.section("Evidence")[1:]
    named = [(row.left or row.right).split()[1] for row in unit_rows]
    assert sorted(named) == sorted(kept)
    by_l, by_r = {c.id: c for c in left}, {c.id: c for c in right}
    for unit, row in zip(named, unit_rows, strict=True):
        a, b = by_l.get(unit), by_r.get(unit)
        if a and b and a.kept and b.kept:
            assert ("↑" in row.note) == (b.rank < a.rank) and ("↓" in row.note) == (b.rank > a.rank)
            assert row.changed == (a.rank != b.rank or abs(a.score - b.score) >= 0.0005)
    assert diff_runs(run(scored=left), run(scored=left)).changes == 0


def test_a_finish_closes_its_running_attempt_whatever_revision_it_names():
    events = run()
    started = next(e for e in events if getattr(e, "plugin", "") == "sd-symbolic" and e.kind == "attempt_started")
    events[events.index(started)] = started.model_copy(update={"revision": 1})
    attempts = [row.left for row in diff_runs(events, events).section("Attempts")]
    assert "sd sd-symbolic success: 1 intent" in attempts and "sd sd-symbolic running" not in attempts


def test_a_changed_row_marks_the_words_that_differ():
    left_answer = "Gauge 1 reads the spring tide at the harbour mouth."
    right_answer = "Gauge 1 reads the neap tide at the harbour mouth."
    row = diff_runs(run(answer=left_answer), run(answer=right_answer)).section("Answer")[1]
    assert [row.left[a:b] for a, b in row.left_words] == ["spring"]
    assert [row.right[a:b] for a, b in row.right_words] == ["neap"]


def test_texts_with_little_in_common_get_no_word_marks():
    row = diff_runs(
        run(answer="Gauge 1 reads the spring tide."), run(answer="No gauge was found for it at all.")
    ).section("Answer")[1]
    assert row.change == "changed" and row.left_words == () and row.right_words == ()


def test_rank_and_score_words_are_marked_in_a_moved_unit():
    left = run(scored=candidates((1, 0.9, True), (2, 0.7, True)))
    right = run(scored=candidates((2, 0.95, True), (1, 0.9, True)))
    moved = diff_runs(left, right).section("Evidence")[1]
    assert [moved.right[a:b] for a, b in moved.right_words] == ["#1", "0.950"]


def test_the_request_section_shows_changes_made_live_while_held():
    from core.kernel.events import Intervened

    live = run()
    live.insert(
        2, Intervened(change="exclude_plugin", target="kb-fast", live=True, note="kb-fast excluded by the user")
    )
    live.insert(
        3,
        Intervened(
            change="exclude_unit",
            target="tide::gauge-2",
            live=True,
            note="unit tide::gauge-2 excluded from the evidence by the user",
        ),
    )
    request = {row.right.split(":")[0]: row.right for row in diff_runs(run(), live).section("Request")}
    assert request["excluded"] == "excluded: kb-fast (live)"
    assert request["excluded units"] == "excluded units: tide::gauge-2 (live)"
