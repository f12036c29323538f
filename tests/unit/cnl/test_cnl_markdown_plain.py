"""The Markdown reader's fast path for plain unit blocks (core/cnl/markdown_plain.py) gives what the
line reader gives, units and diagnostics with file, line and column, on plain and tricky input,
restricted units included; and a KB read through it still filters restricted units before
ranking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cnl import markdown
from core.cnl.markdown import read_markdown
from core.infra.config import load_retrieval_config
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KnowledgeBase
from core.retrieval.rules import RuleSet
from core.store import SegmentStore
from core.store.segment import Segment
from core.text.tokenizer import tokenize
from core.units import Caller
from tests.support.fuzz_settings import bounded


def line_reader(text: str, file: str, first_line: int = 1):
    read = markdown._read_lines(text, file, first_line)
    return ([] if read.whole_file else read.units), read.diagnostics


def plain(n: int, *extra: str, role: str = "Definition", body: str = "Claim: The harbour buoy marks the shoal.") -> str:
    return (
        "\n".join(
            [
                f"## Context Unit harbour::chunk-000::unit-{n:03d}",
                f"Role: {role}",
                f"Topic: buoy number {n}",
                body,
                *extra,
            ]
        )
        + "\n"
    )


# Blocks the fast path builds, and blocks and lines it must leave to the line reader.
BLOCKS = [
    plain(1),
    plain(2, "Acl: crew:night, harbour-master"),
    plain(3, "Region: NORTH", "EffectiveFrom: 2024-01-01", "EffectiveTo: 2030-12-31"),
    plain(4, "UtilityActs: Explain, define", "Condition: at neap tide", "UtilityNote: see the chart"),
    plain(5, role="procedure", body="Procedure: Lower the buoy."),
    plain(6, "Subject: buoy", "Relation: depends on", "Object: chain", "Confidence: 0.5"),
    plain(7, "Id: harbour::chunk-000::unit-007", "Title:   Padded   ", "Condition:"),
    plain(8, "Acl:"),  # an empty permission field: an error
    plain(9, "Acl: crew night"),  # a tag no caller can hold: a warning
    plain(10, "Region: EU", "EffectiveFrom: 2030-01-01", "EffectiveTo: 2020-01-01"),  # never visible
    plain(11, "Claim: again"),  # a repeated field
    plain(12, "Colour: red"),  # an unknown field
    plain(13, "Regoin: EU"),  # a permission look-alike
    plain(14, "Condition: Note, acl: staff"),  # a permission field inside a value
    plain(15, "Id: harbour::chunk-000::unit-999"),  # differs from the heading's id
    plain(16, role="Poem"),
    plain(17, "Procedure: both"),
    plain(18, "  continued on an indented line"),
    plain(19, "- a list item", "1. another"),
    plain(20, "Subject: buoy"),
    plain(21, "Confidence: 2"),
    plain(22, "EffectiveTo: someday"),
    plain(23, "Topic\t: tab before the colon"),
    "## Context Unit not-a-shaped-id\nRole: Definition\nTopic: odd id\nClaim: The id is free text.\n",
    "## Context Unit \nRole: Definition\nTopic: no id\nClaim: The heading has no id.\n",
    "## context unit harbour::chunk-001::unit-000\nRole: Definition\nTopic: lower-case heading\nClaim: Still a unit.\n",
    "##   Context   Unit   harbour::chunk-001::unit-001  \nRole: Definition\nTopic: spaced heading\nClaim: Still one.\n",
    "# Context Unit harbour::chunk-001::unit-002\nRole: Definition\nTopic: misspelt\nClaim: One hash.\n",
    "---\nAcl: staff\n",  # after a unit's end: withdraws the unit above and the next
    "# Harbour notes\n\nSome prose about the harbour.\n",
    "\n\n",
    "   \n",
    "Role: Definition\n",
    "Region: NORTH\n",
]


def test_plain_blocks_read_alike_and_take_the_fast_path(monkeypatch) -> None:
    text = "".join(BLOCKS[:7]) + "\n\n" + BLOCKS[0]
    expected = line_reader(text, "harbour.md")
    calls = []
    original = markdown._read_lines
    monkeypatch.setattr(markdown, "_read_lines", lambda *a: calls.append(a) or original(*a))
    assert read_markdown(text, "harbour.md") == expected
    assert calls == []  # every block was plain
    assert len(expected[0]) == 8 and expected[1] == []
    restricted = [u for u in expected[0] if u.acl or u.region]
    assert [u.acl for u in restricted] == [("crew:night", "harbour-master"), ()]
    assert restricted[1].region == "NORTH"


@pytest.mark.parametrize("block", BLOCKS, ids=range(len(BLOCKS)))
def test_each_kind_of_block_reads_alike_between_plain_ones(block: str) -> None:
    for text in (block, BLOCKS[0] + block + BLOCKS[1], BLOCKS[1] + block, block + BLOCKS[2], block.rstrip("\n")):
        got, want = read_markdown(text, "harbour.md", 5), line_reader(text, "harbour.md", 5)
        assert got == want
        assert [u.model_dump_json() for u in got[0]] == [u.model_dump_json() for u in want[0]]
        assert [u.model_fields_set for u in got[0]] == [u.model_fields_set for u in want[0]]


def test_problems_keep_their_file_line_and_column() -> None:
    text = BLOCKS[0] + BLOCKS[7] + BLOCKS[10] + BLOCKS[17]
    units, diagnostics = read_markdown(text, "harbour.md")
    assert [u.id for u in units] == ["harbour::chunk-000::unit-001", "harbour::chunk-000::unit-018"]
    assert [(d.file, d.line, d.code.value) for d in diagnostics] == [
        (d.file, d.line, d.code.value) for d in line_reader(text, "harbour.md")[1]
    ]
    assert {d.line for d in diagnostics if d.is_error} == {9, 14}  # `Acl:` of unit 8, the second Claim of unit 11


def test_a_permission_line_before_the_first_unit_withdraws_every_unit() -> None:
    text = "Acl: staff\n\n" + BLOCKS[0] + BLOCKS[1]
    units, diagnostics = read_markdown(text, "harbour.md")
    assert units == [] and (units, diagnostics) == line_reader(text, "harbour.md")


@given(st.lists(st.sampled_from(BLOCKS), max_size=8), st.integers(1, 40))
@bounded(300)
def test_any_sequence_of_blocks_reads_alike(blocks: list[str], first_line: int) -> None:
    text = "".join(blocks)
    assert read_markdown(text, "harbour.md", first_line) == line_reader(text, "harbour.md", first_line)


def write_harbour(folder: Path) -> Path:
    folder.mkdir()
    path = folder / "harbour.md"
    path.write_text("".join(BLOCKS[:4]) + "".join(BLOCKS[7:15]), encoding="utf-8")
    return path


def test_a_segment_built_through_the_fast_path_equals_one_from_the_line_reader(tmp_path, monkeypatch) -> None:
    path = write_harbour(tmp_path / "kb")
    fast = Segment.build(path, "k")
    monkeypatch.setattr(markdown, "read_plain", lambda *a: None)
    slow = Segment.build(path, "k")
    assert fast.units == slow.units and fast.diagnostics == slow.diagnostics
    assert fast.unit_json == slow.unit_json and tuple(fast.words) == tuple(slow.words)
    assert np.array_equal(fast.terms, slow.terms) and np.array_equal(fast.lengths, slow.lengths)
    assert np.array_equal(fast.cols, slow.cols) and fast.columns.perms == slow.columns.perms


def test_restricted_units_read_by_the_fast_path_are_filtered_before_ranking(tmp_path, config_path) -> None:
    write_harbour(tmp_path / "kb")
    kb = KnowledgeBase.load([tmp_path / "kb"], store=SegmentStore(tmp_path / "cache"))
    public = {"harbour::chunk-000::unit-001", "harbour::chunk-000::unit-004", "harbour::chunk-000::unit-015"}
    cache = IndexCache(load_retrieval_config(config_path), RuleSet())
    for caller, visible in [
        (Caller(), public),
        (Caller(tags=frozenset({"crew:night"})), public | {"harbour::chunk-000::unit-002"}),
        (Caller(region="NORTH"), public | {"harbour::chunk-000::unit-003"}),
    ]:
        view = kb.view(caller)
        assert {u.id for u in view.units} == visible
        ranked = cache.for_view(view).bm25.top_k(tokenize("harbour buoy shoal"), (), 20)
        assert {uid for uid, _ in ranked} == visible


HEADING_LIKE = [
    "## Context Unit a::chunk-000::unit-000",
    "##Context Unit x",
    "##  context\tunit x",
    "## Context Units",
    "## Context Unit",
    "##",
    "Context Unit x",
    "### Context Unit x",
    " ## Context Unit x",
    "## Context\u00a0Unit x",
    "## Context\x0bUnit x",
    "x## Context Unit",
    "## CONTEXT UNIT-x",
    "Claim: y",
]


@given(st.lists(st.sampled_from(HEADING_LIKE), max_size=12))
@bounded(200)
def test_unit_heading_starts_are_the_lines_the_reader_opens_a_unit_at(lines: list[str]) -> None:
    text = "\n".join(lines)
    starts, at = [], 0
    for line in lines:
        if line.startswith("##") and markdown._UNIT_HEADING.match(line):
            starts.append(at)
        at += len(line) + 1
    assert markdown.unit_heading_starts(text) == starts
