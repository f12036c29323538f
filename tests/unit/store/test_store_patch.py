"""Re-reading an edited file by its unit blocks (core/store/patch.py): after every edit, the
segment equals one read from scratch, and the KB's views and scores equal a fresh load.

The KB is a change-ringing (church bell) society's notes, written here for these tests."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.cnl import markdown as markdown_module
from core.kb.knowledge_base import KnowledgeBase
from core.store import Segment, SegmentStore
from core.store.codec import COL, FACT, FILE, LINE, PERM, ROLE, SET
from core.units import Caller
from tests.unit.store.test_store import assert_same_scores

TOWER = Caller(tags=frozenset({"tower:captain"}), region="NORTH", as_of=dt.date(2026, 3, 1))
# The captain before the chamber rule took effect.
EARLIER = Caller(tags=frozenset({"tower:captain"}), as_of=dt.date(2025, 6, 1))
CALLERS = [Caller(), TOWER, EARLIER]

RINGING = [
    ("Definition", "plain hunt", "Plain hunt moves each bell one place per change until it returns to rounds."),
    (
        "Procedure",
        "raising a bell",
        "Swing the bell in gradually larger arcs until it rests mouth upward at the balance.",
    ),
    (
        "Explanation",
        "stay and slider",
        "The stay and slider stop a bell that swings past the balance from turning over.",
    ),
    ("Definition", "treble", "The treble is the lightest bell of a ring and usually leads in rounds."),
    ("Diagnostic", "clappering", "A clapper that strikes twice on one stroke points to a worn crown staple."),
    ("Comparison", "sallies and tail ends", "The sally is the woollen grip; the tail end is the rope's last length."),
    ("Constraint", "tower access", "Ringers under sixteen climb the tower only with the captain present."),
    ("Definition", "Grandsire", "Grandsire is a method where the treble and one other bell plain hunt."),
    ("Procedure", "calling a touch", "The conductor calls bob or single at the lead end before the change."),
    (
        "Explanation",
        "odd struck",
        "Odd struck bells sound early or late because the rope length differs between strokes.",
    ),
    ("Definition", "peal", "A peal is five thousand or more changes rung without a break."),
    ("Diagnostic", "dropped rope", "A rope that drops off the wheel means the garter hole has split."),
]


def unit_block(number: int, role: str, topic: str, claim: str, extra: str = "") -> str:
    return (
        f"## Context Unit bells::chunk-{number // 10:03d}::unit-{number % 10:03d}\n"
        f"Role: {role}\nTopic: {topic}\nClaim: {claim}\n{extra}"
    )


def write_ringing(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    first = "# Tower notes\n\nSome prose the reader ignores.\n\n" + "\n".join(
        unit_block(i, *entry, "Acl: tower:captain\n" if i == 6 else "") for i, entry in enumerate(RINGING[:8])
    )
    second = "\n".join(
        unit_block(20 + i, *entry, "Region: NORTH\n" if i == 1 else "") for i, entry in enumerate(RINGING[8:])
    )
    paths = [folder / "methods.md", folder / "faults.md"]
    paths[0].write_text(first, encoding="utf-8")
    paths[1].write_text(second, encoding="utf-8")
    return paths


def _edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# Each step edits methods.md; together they walk through what an author does in an afternoon.
EDITS = [
    ("change a claim", lambda t: _edit(t, "usually leads in rounds", "leads in rounds and rings first")),
    ("insert a line that shifts every later unit", lambda t: _edit(t, "Some prose", "More prose.\n\nSome prose")),
    (
        "add a restricted unit in the middle",
        lambda t: _edit(
            t,
            "## Context Unit bells::chunk-000::unit-004",
            unit_block(
                9,
                "Constraint",
                "bell chamber",
                "Nobody enters the bell chamber while the bells are up.",
                "Acl: tower:captain\nEffectiveFrom: 2026-01-01\n",
            )
            + "\n## Context Unit bells::chunk-000::unit-004",
        ),
    ),
    ("remove a unit", lambda t: t.replace(unit_block(5, *RINGING[5]), "")),
    (
        "break a unit's role",
        lambda t: _edit(t, "Role: Diagnostic\nTopic: clappering", "Role: Chime\nTopic: clappering"),
    ),
    ("break an Acl line", lambda t: _edit(t, "Acl: tower:captain\nEffectiveFrom", "Acl:\nEffectiveFrom")),
    (
        "end a unit with another heading",
        lambda t: _edit(t, "Topic: Grandsire", "Topic: Grandsire\n# Aside\nClaim: ignored"),
    ),
    ("repeat an id", lambda t: _edit(t, "bells::chunk-000::unit-003", "bells::chunk-000::unit-002")),
    ("fix everything back", lambda t: write_ringing_text()),
    (
        "append a unit with a fact",
        lambda t: (
            t
            + "\n"
            + unit_block(
                7,
                "Definition",
                "Stedman",
                "Stedman is a principle rung in sixes.",
                "Subject: Stedman\nRelation: is a\nObject: principle\n",
            )
        ),
    ),
    ("empty the file", lambda t: ""),
    ("write it again", lambda t: write_ringing_text()),
]


def write_ringing_text() -> str:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return write_ringing(Path(tmp))[0].read_text(encoding="utf-8")


def assert_same_segment(got: Segment, want: Segment) -> None:
    assert list(got.units) == list(want.units)
    assert got.diagnostics == want.diagnostics
    assert got.columns.ids == want.columns.ids
    for table, column in ((lambda c: c.perms, PERM), (lambda c: c.files, FILE)):
        assert [table(got.columns)[i] for i in got.cols[:, column]] == [
            table(want.columns)[i] for i in want.cols[:, column]
        ]
    for column in (LINE, COL, ROLE, FACT, SET):
        np.testing.assert_array_equal(got.cols[:, column], want.cols[:, column])
    np.testing.assert_array_equal(got.digests, want.digests)
    np.testing.assert_array_equal(got.texts, want.texts)
    np.testing.assert_array_equal(got.lengths, want.lengths)
    assert [got.words[t] for t in got.terms.tolist()] == [want.words[t] for t in want.terms.tolist()]
    for word, stem in want.stems.table().items():
        assert got.stems.lookup(word) == stem


def test_every_edit_gives_the_segment_a_whole_read_gives(tmp_path, monkeypatch):
    paths = write_ringing(tmp_path / "kb")
    KnowledgeBase.load([tmp_path / "kb"], store=SegmentStore(tmp_path / "cache"))
    # A warm open: the edits start from segments (and block tables) read from the cache.
    store = SegmentStore(tmp_path / "cache")
    kb = KnowledgeBase.load([tmp_path / "kb"], store=store)
    assert store.loads == 2 and store.builds == 0
    read_blocks_of = []
    # core/store/patch.py looks the reader up when it reads a block (the readers load lazily).
    real = markdown_module.read_markdown
    monkeypatch.setattr(
        markdown_module, "read_markdown", lambda text, *a, **k: read_blocks_of.append(text) or real(text, *a, **k)
    )
    for name, edit in EDITS:
        paths[0].write_text(edit(paths[0].read_text(encoding="utf-8")), encoding="utf-8")
        read_blocks_of.clear()
        kb = kb.reload()
        segment = kb._stored.segments[str(paths[0])]
        assert_same_segment(segment, Segment.build(paths[0], segment.key))
        if name in ("change a claim", "break a unit's role", "break an Acl line", "repeat an id"):
            # The first edit too: the block table was stored with the segment the open read.
            assert len(read_blocks_of) == 1, name
        elif name in ("remove a unit", "insert a line that shifts every later unit"):
            # Blocks below the edit moved unchanged: they keep their units, located anew. Only
            # the block whose text the edit touched (the one above the removed unit) is read.
            assert len(read_blocks_of) <= 1, name
    # The last segment was saved as built: a new process reads it back unchanged.
    again = KnowledgeBase.load([tmp_path / "kb"], store=SegmentStore(tmp_path / "cache"))
    assert_same_segment(again._stored.segments[str(paths[0])], Segment.build(paths[0], segment.key))


def test_edit_reload_views_and_scores_equal_a_fresh_load(tmp_path):
    kb_dir = tmp_path / "kb"
    paths = write_ringing(kb_dir)
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "cache"))
    questions = ["how do I raise a bell", "treble rounds", "bell chamber bells up", "sally tail end rope"]
    seen_restricted = False
    for name, edit in EDITS:
        paths[0].write_text(edit(paths[0].read_text(encoding="utf-8")), encoding="utf-8")
        kb = kb.reload()
        fresh = KnowledgeBase.load([kb_dir], store=SegmentStore(None))
        for caller in CALLERS:
            assert list(kb.view(caller).units) == list(fresh.view(caller).units), (name, caller)
            assert kb.view(caller).version == fresh.view(caller).version
        chamber = "bells::chunk-000::unit-009"
        if chamber in kb.view(TOWER):
            seen_restricted = True
            assert chamber not in kb.view(Caller()) and chamber not in kb.view(EARLIER)
        assert_same_scores_for(kb, questions)
    assert seen_restricted


def assert_same_scores_for(kb: KnowledgeBase, questions: list[str]) -> None:
    import tests.unit.store.test_store as shared

    saved = shared.CALLERS
    shared.CALLERS = CALLERS
    try:
        assert_same_scores(kb, questions)
    finally:
        shared.CALLERS = saved


@pytest.mark.parametrize("damage", ["no unit heading left", "a bad byte"])
def test_a_file_the_block_reader_does_not_take_is_read_whole(tmp_path, damage):
    paths = write_ringing(tmp_path / "kb")
    kb = KnowledgeBase.load([tmp_path / "kb"], store=SegmentStore(tmp_path / "cache"))
    if damage == "a bad byte":
        paths[0].write_bytes(paths[0].read_bytes().replace(b"lightest", b"light\xffest"))
    else:
        paths[0].write_text("Just prose about bells.\n", encoding="utf-8")
    kb = kb.reload()
    segment = kb._stored.segments[str(paths[0])]
    assert_same_segment(segment, Segment.build(paths[0], segment.key))


@pytest.mark.parametrize("lightest", ["lightest", "lightést"])
def test_a_block_tables_digests_are_its_blocks_text_digests_in_an_ascii_file_or_not(tmp_path, lightest):
    from core.store.patch import _blocks_of, _digest, block_table

    paths = write_ringing(tmp_path / "kb")
    paths[0].write_text(paths[0].read_text(encoding="utf-8").replace("lightest", lightest), encoding="utf-8")
    content = paths[0].read_bytes()
    table = block_table(content, str(paths[0]), Segment.build(paths[0], ""))
    blocks = _blocks_of(content, str(paths[0]))
    assert table is not None and blocks is not None and len(blocks) > 1
    text = content.decode("utf-8")
    assert [line for line, _ in blocks] == [text.count("\n", 0, text.index(block)) + 1 for _, block in blocks]
    assert table.rows[:, 0].tolist() == [line for line, _ in blocks]
    assert [table.find(line, _digest(text)) for line, text in blocks] == [
        tuple(row) for row in table.rows[:, 1:4].tolist()
    ]


def test_a_block_table_that_does_not_fit_its_segment_is_not_used(tmp_path):
    from core.store.patch import BlockTable, block_table

    paths = write_ringing(tmp_path / "kb")
    content = paths[0].read_bytes()
    segment = Segment.build(paths[0], "")
    table = block_table(content, str(paths[0]), segment)
    assert table is not None and BlockTable.load(table.rows, segment) is not None
    shifted = table.rows.copy()
    shifted[:, 1] = np.where(shifted[:, 1] >= 0, shifted[:, 1] + 1, -1)  # rows past the segment's units
    assert BlockTable.load(shifted, segment) is None
    beyond = table.rows.copy()
    beyond[-1, 3] = len(segment.diagnostics) + 1  # diagnostics past the segment's
    assert BlockTable.load(beyond, segment) is None
    assert BlockTable.load(table.rows[:, :4].copy(), segment) is None


def test_after_a_merge_a_reload_scores_unchanged_files_from_the_merged_index_exactly(tmp_path, config_path):
    from core.infra.config import load_retrieval_config
    from core.kernel.session import Session
    from core.retrieval.bm25.index import Bm25Index
    from core.retrieval.bm25.parts import Bm25Parts, Bm25Slice
    from core.text.tokenizer import tokenize

    kb_dir = tmp_path / "kb"
    paths = write_ringing(kb_dir)
    # A third file, so that the slice holds more than one file's rows.
    (kb_dir / "tower.md").write_text(
        "\n".join(unit_block(40 + i, *entry) for i, entry in enumerate(RINGING[2:7])), encoding="utf-8"
    )
    session = Session.open([kb_dir], config_path)
    session.warm_up(TOWER)
    config = load_retrieval_config(config_path).bm25
    questions = ["raise the bell to the balance", "treble rounds lead", "bell chamber", "rope wheel garter"]
    sliced = 0
    for name, edit in EDITS[:6]:
        paths[0].write_text(edit(paths[0].read_text(encoding="utf-8")), encoding="utf-8")
        session.reload()
        for caller in CALLERS:
            view = session.view(caller)
            index = session.indexes.for_view(view).bm25
            assert isinstance(index, Bm25Parts)
            sliced += any(isinstance(part, Bm25Slice) for part in index.parts)
            fresh = Bm25Index.build(list(view.units), config)
            assert sorted(index.unit_ids) == sorted(fresh.unit_ids), (name, caller)
            for question in questions:
                tokens = tokenize(question)
                by_id = dict(zip(index.unit_ids, index.scores(tokens, ()), strict=True))
                np.testing.assert_allclose(
                    [by_id[u] for u in fresh.unit_ids], fresh.scores(tokens, ()), rtol=0, atol=1e-9
                )
                got, want = index.top_k(tokens, (), 5), fresh.top_k(tokens, (), 5)
                assert [u for u, _ in got] == [u for u, _ in want]
                for unit_id, _ in want:
                    assert index.matched_terms(tokens, unit_id) == fresh.matched_terms(tokens, unit_id)
                    explained = index.explain(tokens, unit_id, ())
                    assert explained.raw == pytest.approx(fresh.explain(tokens, unit_id, ()).raw, abs=1e-9)
    # The files the edits did not touch came from the merged index, for more than its own caller.
    assert sliced >= len(EDITS[:6]) * 2


# Lines an author might type anywhere in a unit Markdown file, valid or not.
LINE_POOL = [
    "## Context Unit bells::chunk-003::unit-001",
    "## Context Unit bells::chunk-003::unit-002",
    "## context   unit bells::chunk-003::unit-003",
    "## Context Unit",
    "##Context Unit bells::chunk-003::unit-004",
    "Role: Definition",
    "Role: Chime",
    "Topic: muffled ringing",
    "Claim: Muffles soften one stroke of each bell.",
    "Acl: tower:captain",
    "Acl:",
    "Region: NORTH",
    "EffectiveFrom: 2026-01-01",
    "EffectiveTo: 2020-13-01",
    "Subject: muffle",
    "Relation: is a",
    "Object: pad",
    "Confidence: 0.5",
    "Bogus: field",
    "  and it goes on",
    "- a listed step",
    "# Another heading",
    "---",
    "",
    "Some loose prose.",
    "Procedure: Tie the muffle on.",
]


@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.lists(
        st.tuples(st.sampled_from(["replace", "insert", "delete"]), st.integers(0, 200), st.sampled_from(LINE_POOL)),
        min_size=1,
        max_size=4,
    )
)
def test_any_run_of_line_edits_gives_the_segment_a_whole_read_gives(edits):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        paths = write_ringing(Path(tmp) / "kb")
        kb = KnowledgeBase.load([Path(tmp) / "kb"], store=SegmentStore(Path(tmp) / "cache"))
        for kind, at, line in edits:
            lines = paths[0].read_text(encoding="utf-8").split("\n")
            at %= len(lines) + (kind == "insert")
            if kind == "replace" and at < len(lines):
                lines[at] = line
            elif kind == "insert":
                lines.insert(at, line)
            elif lines:
                del lines[at % len(lines)]
            paths[0].write_text("\n".join(lines), encoding="utf-8")
            kb = kb.reload()
            segment = kb._stored.segments[str(paths[0])]
            assert_same_segment(segment, Segment.build(paths[0], segment.key))


def test_an_empty_markdown_file_loads_and_its_first_units_read_like_a_whole_read(tmp_path):
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    empty = kb_dir / "empty.md"
    empty.write_text("", encoding="utf-8")
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "cache"))
    assert kb.unit_count == 0 and not [d for d in kb.diagnostics if d.is_error]
    empty.write_text(unit_block(1, *RINGING[0]), encoding="utf-8")
    kb = kb.reload()
    segment = kb._stored.segments[str(empty)]
    assert_same_segment(segment, Segment.build(empty, segment.key))
    assert kb.unit_count == 1


def stored_blocks(cache: Path, path: Path) -> np.ndarray | None:
    """The block table a new process finds in the cache for the file's stored segment."""
    store = SegmentStore(cache)
    table = store._blocks_of(store.segment(path))
    return None if table is None else table.rows


def test_a_block_table_left_to_the_second_pass_is_the_one_a_serial_build_saves(tmp_path):
    paths = write_ringing(tmp_path / "kb")
    SegmentStore(tmp_path / "serial").segment(paths[0])
    deferred = SegmentStore(tmp_path / "deferred", defer_blocks=True)
    deferred.segment(paths[0])
    assert stored_blocks(tmp_path / "deferred", paths[0]) is None
    second = SegmentStore(tmp_path / "deferred")
    segment = second.segment(paths[0])
    assert second.add_block_table(paths[0], segment) and second.add_block_table(paths[0], segment)
    np.testing.assert_array_equal(
        stored_blocks(tmp_path / "deferred", paths[0]), stored_blocks(tmp_path / "serial", paths[0])
    )
    # The segment still loads, its meta.json naming one more file.
    assert SegmentStore(tmp_path / "deferred").segment(paths[0]).key == segment.key


def test_a_block_table_no_digest_names_is_not_used_and_an_edit_reads_whole(tmp_path):
    paths = write_ringing(tmp_path / "kb")
    SegmentStore(tmp_path / "serial").segment(paths[0])
    store = SegmentStore(tmp_path / "deferred", defer_blocks=True)
    segment = store.segment(paths[0])
    # A crash between writing the table and recording its digest in meta.json.
    folder = store.folder_of(segment)
    serial = SegmentStore(tmp_path / "serial")
    (folder / "blocks.npy").write_bytes((serial.folder_of(serial.segment(paths[0])) / "blocks.npy").read_bytes())
    assert stored_blocks(tmp_path / "deferred", paths[0]) is None
    later = SegmentStore(tmp_path / "deferred")
    earlier = later.segment(paths[0])
    paths[0].write_text(EDITS[0][1](paths[0].read_text(encoding="utf-8")), encoding="utf-8")
    edited = later.segment(paths[0], earlier)
    assert_same_segment(edited, Segment.build(paths[0], edited.key))
    # Read whole, the edited file's segment was saved with its table.
    assert stored_blocks(tmp_path / "deferred", paths[0]) is not None


def test_no_block_table_is_added_for_a_file_changed_since_its_segment(tmp_path):
    paths = write_ringing(tmp_path / "kb")
    store = SegmentStore(tmp_path / "cache", defer_blocks=True)
    segment = store.segment(paths[0])
    paths[0].write_text(EDITS[0][1](paths[0].read_text(encoding="utf-8")), encoding="utf-8")
    assert not SegmentStore(tmp_path / "cache").add_block_table(paths[0], segment)
    assert not (store.folder_of(segment) / "blocks.npy").exists()
