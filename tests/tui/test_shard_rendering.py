"""How the explorer renders a run searched on a cluster's shards, from the events alone (no
cluster here: tests/tui/test_cluster_explorer.py runs one): the shard column only for a sharded
retrieval, each shard's ms in an attempt's detail, silent shards in the attempt row and under the
answer's status, and `ask`'s summary of them."""

from __future__ import annotations

from core.kernel.candidates import CandidateScore
from core.kernel.events import (
    AnswerReady,
    AttemptFinished,
    AttemptStarted,
    RetrievalScored,
    ShardTiming,
)
from core.kernel.summary import summarise
from mrptui.state import reduce
from mrptui.widgets.answer import render_answer
from mrptui.widgets.evidence import COLUMNS, columns_of, sort_candidates
from mrptui.widgets.timeline import row_detail, silent_shards


def timings(*silent: int, of: int = 4) -> tuple[ShardTiming, ...]:
    return tuple(
        ShardTiming(shard=n, of=of, ms=0.0 if n in silent else n / 2, answered=n not in silent)
        for n in range(1, of + 1)
    )


def attempt(plugin: str, shards: tuple[ShardTiming, ...], status: str = "success") -> list:
    return [
        AttemptStarted(stage="kb", plugin=plugin, revision=0),
        AttemptFinished(stage="kb", plugin=plugin, status=status, reason="raised ShardUnavailable: …", shards=shards),
    ]


def scored(shards: int, *placed: int | None) -> RetrievalScored:
    candidates = tuple(
        CandidateScore(id=f"u{n}", role="Explanation", rank=n, fused=1.0, score=1.0 - n / 10, kept=True, shard=shard)
        for n, shard in enumerate(placed, start=1)
    )
    return RetrievalScored(
        plugin="kb-fast",
        act="explain",
        query_terms=("kiln",),
        lanes=("bm25",),
        sufficient=True,
        total_candidates=len(candidates),
        candidates=candidates,
        evidence_ids=(),
        shards=shards,
    )


def test_the_shard_column_is_there_only_for_a_sharded_retrieval() -> None:
    assert columns_of(None) == COLUMNS and columns_of(scored(0, None)) == COLUMNS
    keys = [c.key for c in columns_of(scored(4, 3, None))]
    assert keys[keys.index("kept") + 1] == "shard" and len(keys) == len(COLUMNS) + 1
    # Sorting by shard: a current-turn unit (no shard) last, as any missing value.
    ordered = sort_candidates(scored(4, None, 3, 1).candidates, "shard", False)
    assert [c.shard for c in ordered] == [1, 3, None]


def test_an_attempts_detail_lists_each_shards_ms_or_that_it_did_not_answer() -> None:
    row = reduce(attempt("kb-balanced", timings(3))).attempts[0]
    detail = row_detail(row)
    assert "shard 1 of 4: 0.5 ms\nshard 2 of 4: 1.0 ms\nshard 3 of 4: did not answer\nshard 4 of 4: 2.0 ms" in detail
    assert "ms" not in row_detail(row, show_durations=False).split("\n", 2)[2]  # durations hidden: hidden here too
    assert silent_shards(row.shards) == "shard 3 of 4 did not answer"
    assert silent_shards(timings(1, 3)) == "shards 1, 3 of 4 did not answer"
    assert silent_shards(timings()) == "" and row_detail(reduce(attempt("kb-fast", ())).attempts[0]).count("\n") == 1


def test_silent_shards_are_named_under_the_answers_status_and_in_asks_summary() -> None:
    events = [
        *attempt("kb-fast", timings(3), "error"),
        *attempt("kb-balanced", timings(1, 3), "error"),
        AnswerReady(answer="I found no evidence.", status="no-context"),
    ]
    text = render_answer(reduce(events))
    assert text.splitlines()[1].endswith("✗ shards 1, 3 of 4 did not answer: the answer is incomplete[/]")
    summary = summarise(events)
    assert summary["incomplete"] == [
        "shard 3 of 4 did not answer (kb-fast, kb-balanced)",
        "shard 1 of 4 did not answer (kb-balanced)",
    ]
    assert [t["answered"] for t in summary["attempts"][0]["shards"]] == [True, True, False, True]
    # A run in one process says nothing of shards.
    one = [*attempt("kb-fast", ()), AnswerReady(answer="Atlas.", status="grounded")]
    assert "shard" not in render_answer(reduce(one)) and "shards" not in summarise(one)["attempts"][0]
    assert summarise(one)["incomplete"] == []
