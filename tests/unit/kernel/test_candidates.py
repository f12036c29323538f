"""A `RetrievalScored` event's rows: built from the engine's fields when read, and read, compared
and written exactly as rows validated at once (core/kernel/candidates.py)."""

from __future__ import annotations

import copy
import pickle

import pytest
from pydantic import ValidationError

from core.kernel.candidates import CandidateRows, CandidateScore
from core.kernel.contract import Request
from core.kernel.events import RetrievalScored, from_json_line, to_json_line
from core.kernel.session import Session


def _fields(rank: int, **more: object) -> dict[str, object]:
    return {
        "id": f"doc::chunk-001::unit-{rank:03d}",
        "role": "Definition",
        "rank": rank,
        "bm25_raw": 2.0 / rank,
        "bm25": 1.0 / rank,
        "fused": 0.9 / rank,
        "score": 0.9 / rank,
        "kept": rank < 3,
        "cut_reason": None if rank < 3 else "max_results",
        "bm25_terms": [
            {"term": "helix", "field": "topic", "tf": 1, "idf": 2.5, "field_weight": 1.5, "contribution": 1.1}
        ],
        "fusion": {"lanes": [{"lane": "bm25", "raw": 2.0 / rank, "score": 1.0 / rank, "weight": 0.9}], "fused": 0.9},
        **more,
    }


def _event(candidates: object) -> RetrievalScored:
    return RetrievalScored.model_validate(
        {
            "plugin": "kb-fast",
            "act": "define",
            "query_terms": ("helix",),
            "lanes": ("bm25",),
            "sufficient": True,
            "total_candidates": 4,
            "candidates": candidates,
            "evidence_ids": ("doc::chunk-001::unit-001",),
        }
    )


FIELDS = [_fields(rank) for rank in range(1, 5)]


def _when_read(fields: list[dict[str, object]], asked: list[int] | None = None) -> CandidateRows:
    def row(index: int) -> dict[str, object]:
        if asked is not None:
            asked.append(index)
        return fields[index]

    return CandidateRows.built_when_read(len(fields), row)


def test_rows_built_when_read_read_write_and_compare_as_validated_rows() -> None:
    deferred = _event(_when_read(FIELDS))
    validated = _event([CandidateScore.model_validate(f) for f in FIELDS])
    assert to_json_line(deferred) == to_json_line(validated)
    assert deferred == validated
    assert deferred.model_dump() == validated.model_dump()
    assert list(deferred.candidates) == list(validated.candidates)
    assert deferred.candidates[-1].rank == 4
    assert [c.rank for c in deferred.candidates[1:3]] == [2, 3]
    assert deferred.candidates[0].bm25_terms[0].term == "helix"


def test_a_row_is_built_once_and_only_when_read() -> None:
    asked: list[int] = []
    rows = _when_read(FIELDS, asked)
    event = _event(rows)
    assert asked == [] and len(event.candidates) == 4
    first = rows[0]
    assert rows[0] is first and rows[-4] is first
    assert asked == [0]
    # An unread row with a bad field is not validated until read, and then fails as validation does.
    bad = _when_read([*FIELDS, _fields(5, cut_reason="too_low")])
    assert len(bad) == 5
    assert bad[0] == first
    with pytest.raises(ValidationError):
        bad[4]


def test_a_trace_line_reads_back_to_the_same_event() -> None:
    event = _event(_when_read(FIELDS))
    back = from_json_line(to_json_line(event))
    assert back == event and to_json_line(back) == to_json_line(event)
    assert isinstance(back, RetrievalScored) and isinstance(back.candidates, CandidateRows)
    assert pickle.loads(pickle.dumps(event)) == event
    assert copy.deepcopy(event) == event


def test_rows_given_as_fields_are_validated_at_once_unless_deferred() -> None:
    with pytest.raises(ValidationError):
        _event([*FIELDS, _fields(5, cut_reason="too_low")])


def test_every_row_the_engine_scores_on_the_sample_kb_is_a_valid_row() -> None:
    session = Session.open()
    events = list(session.run(Request(question="Which services use Python?")))
    scored = [e for e in events if isinstance(e, RetrievalScored)]
    assert scored and all(len(e.candidates) > 0 for e in scored)
    for event in scored:
        assert from_json_line(to_json_line(event)) == event
        assert all(isinstance(c, CandidateScore) for c in event.candidates)
