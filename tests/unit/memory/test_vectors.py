"""Unit vectors in the index store (core/store/vectors.py, core/store/vector_sets.py): HDC vectors
of every encoding and the dense lane's embeddings are kept per KB file, equal freshly built ones,
are rebuilt only for an edited file, and a damaged or foreign set is rebuilt with a warning."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

from core.infra.config import DenseConfig, load_retrieval_config
from core.infra.diagnostics import Code
from core.infra.embeddings import EmbeddingConfig
from core.kb.dense import DenseLane
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KnowledgeBase
from core.retrieval.hdc.index import HdcIndex
from core.retrieval.rules import RuleSet
from core.store import SegmentStore
from core.store.vector_sets import vectors_of
from core.text.tokenizer import tokenize
from core.units import Act, Caller
from mrptui.cli import main
from tests.support.store_kb import write_kb
from tests.unit.kb.test_dense import DIM, KB_TEXT, EmbeddingServer

ROOT = Path(__file__).resolve().parents[3]
PUBLIC, NIGHT = Caller(), Caller(tags=frozenset({"crew:night"}))
ENCODINGS = [
    {},  # the shipped default: sentence windows and character 3-grams
    {"claim_window": 0, "char_ngrams": 0},
    {"claim_window": 2, "char_ngrams": 4},
    {"context_vectors": 32},
]
QUESTIONS = ["hive tide swarm", "varroa mite colony", "neap harbour chart"]


def hdc(kb: KnowledgeBase, caller: Caller = PUBLIC, **options) -> tuple[HdcIndex, IndexCache]:
    config = load_retrieval_config(ROOT / "config")
    config = config.model_copy(update={"hdc": config.hdc.model_copy(update=options)})
    cache = IndexCache(config, RuleSet())
    return cache.for_view(kb.view(caller)).hdc, cache


def vector_sets(cache: Path, kind: str) -> list[Path]:
    return sorted(p.parent for p in (cache / "segments").glob(f"*/*/vectors/{kind}-*/meta.json"))


def in_view_order(index: HdcIndex) -> tuple[np.ndarray, list[np.ndarray]]:
    """The index's topic vectors and each unit's claim windows, in its view's order."""
    order = np.arange(len(index)) if index.order is None else index.order
    return np.asarray(index.topic)[order], [index._windows(int(row)) for row in order]


def assert_same_scores(index: HdcIndex, fresh: HdcIndex) -> None:
    assert index.unit_ids == fresh.unit_ids
    (topic, windows), (fresh_topic, fresh_windows) = in_view_order(index), in_view_order(fresh)
    np.testing.assert_array_equal(topic, fresh_topic)
    assert len(windows) == len(fresh_windows)
    for mine, theirs in zip(windows, fresh_windows):
        np.testing.assert_array_equal(mine, theirs)
    for question in QUESTIONS:
        query = fresh.query(tokenize(question), Act.DEFINE)
        np.testing.assert_array_equal(index.scores(query), fresh.scores(query))


@pytest.mark.parametrize("options", ENCODINGS)
def test_stored_hdc_vectors_equal_freshly_built_ones(tmp_path, options):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=3)
    store = SegmentStore(cache)
    first, _ = hdc(KnowledgeBase.load([kb_dir], store=store), **options)
    assert vectors_of(store).built["hdc"] == 120  # every unit of every file, restricted ones too
    assert len(vector_sets(cache, "hdc")) == 3
    # A new process: every vector comes from the store, none is encoded.
    again = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=again)
    stored, indexes = hdc(kb, PUBLIC, **options)
    assert_same_scores(stored, HdcIndex.build(kb.view(PUBLIC).units, indexes.config.hdc))
    assert vectors_of(again).built["hdc"] == 0 and indexes.vectors.encoded == 0
    # Another caller reuses them too, except learned token vectors: the model is the view's own.
    wider, indexes = hdc(kb, NIGHT, **options)
    assert_same_scores(wider, HdcIndex.build(kb.view(NIGHT).units, indexes.config.hdc))
    assert vectors_of(again).built["hdc"] == (120 if options.get("context_vectors") else 0)
    assert len(first) < len(wider)


def test_an_edited_file_rebuilds_only_its_vectors(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    paths = write_kb(kb_dir, files=4)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    hdc(kb)
    vectors = vectors_of(store)
    assert vectors.built["hdc"] == 160
    text = paths[1].read_text(encoding="utf-8")
    paths[1].write_text(text.replace("Topic: ", "Topic: quillwort ", 1), encoding="utf-8")
    reloaded = kb.reload()
    index, indexes = hdc(reloaded)
    assert vectors.built["hdc"] == 200  # the edited file's 40 units, nothing else
    assert_same_scores(index, HdcIndex.build(reloaded.view(PUBLIC).units, indexes.config.hdc))
    assert len(vector_sets(cache, "hdc")) == 4  # the old file version's vectors went with its segment


@pytest.mark.parametrize(
    ("options", "builds", "sets"),
    [
        ({"seed": "another-seed"}, 80, 2),  # another encoding: a set of its own
        # Weights, the noise floor and feedback change scores, not vectors: one set serves both.
        ({"noise_sigmas": 2.0, "feedback_units": 0, "field_weights": {"topic": 0.5, "claim": 0.5}}, 40, 1),
    ],
)
def test_a_set_is_keyed_by_what_changes_the_vectors(tmp_path, options, builds, sets):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    hdc(kb)
    hdc(kb, **options)
    hdc(kb)
    assert vectors_of(store).built["hdc"] == builds and len(vector_sets(cache, "hdc")) == sets


def truncate(folder: Path) -> None:
    array = max(folder.glob("*.npy"), key=lambda p: p.stat().st_size)
    array.write_bytes(array.read_bytes()[:-100])


def flip_a_bit(folder: Path) -> None:
    array = max(folder.glob("*.npy"), key=lambda p: p.stat().st_size)
    data = bytearray(array.read_bytes())
    data[-7] ^= 0x10  # same size and shape: only the checksum can tell
    array.write_bytes(bytes(data))


def foreign(folder: Path) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    meta["options"]["seed"] = "someone-else"
    (folder / "meta.json").write_text(json.dumps(meta))


def unfinished(folder: Path) -> None:
    (folder / "meta.json").unlink()


@pytest.mark.parametrize("damage", [truncate, flip_a_bit, foreign, unfinished])
def test_a_damaged_vector_set_is_rebuilt_with_a_warning(tmp_path, damage):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    good, _ = hdc(KnowledgeBase.load([kb_dir], store=SegmentStore(cache)))
    damage(vector_sets(cache, "hdc")[0])
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    index, _ = hdc(kb)
    assert vectors_of(store).built["hdc"] == 40
    assert_same_scores(index, good)
    warnings = [d for d in KnowledgeBase.load([kb_dir], store=store).diagnostics if d.code is Code.INDEX_CACHE]
    if damage is unfinished:
        assert warnings == []  # a writer that died before its meta published nothing
    else:
        assert len(warnings) == 1 and "hdc vectors" in warnings[0].message and "rebuilt" in warnings[0].message
    # Saved again: the next process builds nothing.
    again = SegmentStore(cache)
    hdc(KnowledgeBase.load([kb_dir], store=again))
    assert vectors_of(again).built["hdc"] == 0


def test_vectors_that_cannot_be_written_are_kept_in_memory_with_one_warning(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    for folder in (cache / "segments").glob("*/*"):
        (folder / "vectors").write_text("a file where the vectors folder goes")
    index, indexes = hdc(kb)
    hdc(kb, NIGHT)
    assert vectors_of(store).built["hdc"] == 80  # encoded once, then served from memory
    assert_same_scores(index, HdcIndex.build(kb.view(PUBLIC).units, indexes.config.hdc))
    warnings = [d.message for d in store.take_notes()]
    assert len(warnings) == 1 and "cannot write unit vectors" in warnings[0]


def test_without_a_cache_vectors_are_built_in_memory(tmp_path, monkeypatch):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=2)
    monkeypatch.setenv("MRPTUI_NO_CACHE", "1")
    store = SegmentStore(None)
    kb = KnowledgeBase.load([kb_dir], store=store)
    index, indexes = hdc(kb)
    assert vectors_of(store).built["hdc"] == 0 and indexes.vectors.encoded == len(index)
    assert_same_scores(index, HdcIndex.build(kb.view(PUBLIC).units, indexes.config.hdc))


def test_a_requests_own_units_are_encoded_beside_the_stored_ones(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    base = kb.view(PUBLIC)
    extra = base.units[0].model_copy(
        update={"id": "turn::c::u0", "topic": "quillwort harbour", "claim": "Neap tide. Slack water."}
    )
    view = base.with_extra([extra])
    config = load_retrieval_config(ROOT / "config")
    index = IndexCache(config, RuleSet()).for_view(view).hdc
    fresh = HdcIndex.build(view.units, config.hdc)
    # A side index beside the base view's (tests/unit/retrieval/test_hdc_side.py): the same scores.
    assert_same_scores(index.base, HdcIndex.build(base.units, config.hdc))
    assert list(index.unit_ids) == fresh.unit_ids
    for question in QUESTIONS:
        query = fresh.query(tokenize(question), Act.DEFINE)
        np.testing.assert_array_equal(index.scores(query), fresh.scores(query))


# --- dense ---------------------------------------------------------------------------------


@pytest.fixture
def embedder():
    running = EmbeddingServer()
    yield running
    running.close()


def dense_lane(url: str, **options) -> DenseLane:
    return DenseLane(EmbeddingConfig(base_url=url, batch_size=4, **options), DenseConfig(lane_min_score=0.1))


def shop(tmp_path: Path) -> tuple[Path, Path]:
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / "shop.md").write_text(KB_TEXT, encoding="utf-8")
    tea = KB_TEXT.replace("shop::", "tea::").replace("Kettle", "Teapot").replace("kettle", "teapot")
    (kb_dir / "tea.md").write_text(tea, encoding="utf-8")
    return kb_dir, tmp_path / "cache"


def dense_index(kb: KnowledgeBase, url: str, caller: Caller = PUBLIC):
    view = kb.view(caller)
    return dense_lane(url).build(view.units, view.stored)


def test_dense_vectors_are_stored_per_file_and_only_visible_units_are_sent(tmp_path, embedder):
    kb_dir, cache = shop(tmp_path)
    server = embedder
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    first = dense_index(kb, server.url)
    assert len(server.inputs) == 4 and not any("Staff" in t for t in server.inputs)
    assert vectors_of(store).built["dense"] == 4
    # A new process embeds nothing for the same caller; a wider caller only its extra units.
    again = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=again)
    second = dense_index(kb, server.url)
    assert len(server.inputs) == 4
    np.testing.assert_array_equal(second.matrix, first.matrix)
    staff = dense_index(kb, server.url, Caller(tags=frozenset({"staff"})))
    assert len(server.inputs) == 6 and all("Staff" in t for t in server.inputs[4:])
    unstored = DenseLane(EmbeddingConfig(base_url=server.url), DenseConfig())
    fresh = unstored.build(kb.view(Caller(tags=frozenset({"staff"}))).units)
    np.testing.assert_allclose(staff.matrix, fresh.matrix, rtol=0, atol=1e-7)
    assert staff.matrix.shape == (6, DIM)
    # An edited file: only its units are embedded again.
    (kb_dir / "tea.md").write_text((kb_dir / "tea.md").read_text().replace("14 days", "21 days"), encoding="utf-8")
    sent = len(server.inputs)
    dense_index(kb.reload(), server.url)
    assert server.inputs[sent:] == [
        "Laptop returns\nA laptop may be returned within 30 days.",
        "Teapot returns\nA teapot may be returned within 21 days.",
    ]


def test_a_truncated_dense_set_is_embedded_again(tmp_path, embedder):
    kb_dir, cache = shop(tmp_path)
    first = dense_index(KnowledgeBase.load([kb_dir], store=SegmentStore(cache)), embedder.url)
    truncate(vector_sets(cache, "dense")[0])
    store = SegmentStore(cache)
    again = dense_index(KnowledgeBase.load([kb_dir], store=store), embedder.url)
    assert vectors_of(store).built["dense"] == 2
    np.testing.assert_array_equal(again.matrix, first.matrix)
    assert any("dense vectors" in d.message for d in store.take_notes())


def test_a_model_that_changes_dimension_is_embedded_again(tmp_path, embedder):
    kb_dir, cache = shop(tmp_path)
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    index = dense_index(kb, embedder.url)
    lane = dense_lane(embedder.url)
    embedder.mode = "wide"  # the same model name now answers 2 × DIM dimensions
    with pytest.raises(Exception, match="now answers 64 dimensions"):
        lane.pool(index, "laptop")
    assert index.stale and not vector_sets(cache, "dense")
    store = SegmentStore(cache)
    rebuilt = dense_index(KnowledgeBase.load([kb_dir], store=store), embedder.url)
    assert rebuilt.matrix.shape == (4, 2 * DIM) and vectors_of(store).built["dense"] == 4
    assert lane.pool(rebuilt, "laptop")


def test_the_old_dense_cache_is_removed_and_nothing_else(tmp_path, embedder):
    old = tmp_path / "old-cache"
    old.mkdir()
    legacy = old / "0123456789abcdef.npz"
    np.savez(legacy, keys=np.array(["k"]), vectors=np.zeros((1, 4), np.float32))
    (old / ".dense-abc123.npz").write_bytes(b"half written")
    mine = old / "fedcba9876543210.npz"  # the old name pattern, but the user's own arrays
    np.savez(mine, weights=np.zeros(3))
    notes = old / "notes.txt"
    notes.write_text("mine")
    dense_lane(embedder.url, cache_dir=old)
    assert sorted(p.name for p in old.iterdir()) == ["fedcba9876543210.npz", "notes.txt"]
    with zipfile.ZipFile(mine) as archive:
        assert archive.namelist() == ["weights.npy"]
    # Unconfigured, nothing is touched at all.
    np.savez(legacy, keys=np.array(["k"]), vectors=np.zeros((1, 4), np.float32))
    DenseLane(EmbeddingConfig(cache_dir=old), DenseConfig())
    assert legacy.exists()


def test_cache_info_lists_vector_sets(tmp_path, capsys, embedder):
    kb_dir, cache = shop(tmp_path)
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    hdc(kb)
    dense_index(kb, embedder.url)
    assert main(["--cache-dir", str(cache), "cache", "info"]) == 0
    out = capsys.readouterr().out.splitlines()
    vector_lines = [line.strip() for line in out if line.strip().startswith("vectors:")]
    assert len(vector_lines) == 2
    assert all("hdc" in line and "3 units" in line and "dense" in line and f"× {DIM}" in line for line in vector_lines)


def test_a_view_reads_the_stored_sets_in_place_and_gathers_only_the_rows_it_permits(tmp_path):
    import random

    from core.cnl import to_markdown
    from core.retrieval.row_blocks import RowBlocks
    from tests.support.store_kb import unit

    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    kb_dir.mkdir()
    rng = random.Random(5)
    for number in range(3):  # files whose every unit everyone may see
        units = [
            unit(rng, f"open{number}", i).model_copy(update={"acl": (), "region": None, "effective_to": None})
            for i in range(30)
        ]
        (kb_dir / f"open{number}.md").write_text(to_markdown(units), encoding="utf-8")
    write_kb(kb_dir / "mixed", files=2)  # and files with restricted units
    hdc(KnowledgeBase.load([kb_dir], store=SegmentStore(cache)))
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))  # a new process: sets mapped from disk
    index, indexes = hdc(kb)
    assert isinstance(index.topic, RowBlocks) and isinstance(index.claim, RowBlocks)
    assert len(index.topic.blocks) == 5
    # An open file's rows are its stored set itself; a mixed file's permitted rows are gathered.
    # (A stored set is the file's bytes, mapped or read whole: core/store/mapped.py; a gathered
    # copy owns its rows.)
    in_place = sorted(not block.flags.owndata for block in index.topic.blocks)
    assert in_place == [False, False, True, True, True]
    assert_same_scores(index, HdcIndex.build(kb.view(PUBLIC).units, indexes.config.hdc))


def test_a_view_whose_order_interleaves_files_scores_as_a_fresh_build(tmp_path):
    """The view lists units by id; two files whose ids interleave give block rows in file order
    and a map back to the view's order (the vectors are not copied to reorder them)."""
    import random

    from core.cnl import to_markdown
    from tests.support.store_kb import unit

    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    kb_dir.mkdir()
    rng = random.Random(8)
    for number in range(2):
        units = [
            unit(rng, "log", 2 * i + number).model_copy(update={"acl": (), "region": None, "effective_to": None})
            for i in range(25)
        ]
        (kb_dir / f"log{number}.md").write_text(to_markdown(units), encoding="utf-8")
    hdc(KnowledgeBase.load([kb_dir], store=SegmentStore(cache)))
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    index, indexes = hdc(kb)
    assert index.order is not None and not np.array_equal(index.order, np.arange(len(index)))
    assert sorted(index.order.tolist()) == list(range(len(index)))
    assert_same_scores(index, HdcIndex.build(kb.view(PUBLIC).units, indexes.config.hdc))
    fresh = HdcIndex.build(kb.view(PUBLIC).units, indexes.config.hdc)
    query = fresh.query(tokenize("tide harbour chart"), Act.DEFINE)
    for unit_id in index.unit_ids[:6]:
        assert index.field_similarities(query, unit_id) == fresh.field_similarities(query, unit_id)
        np.testing.assert_array_equal(index.text_vector(unit_id), fresh.text_vector(unit_id))
