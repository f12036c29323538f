"""A cold open's segments built by worker processes (core/store/pool.py) equal the serial build,
a warm open starts no workers, and a pool that cannot run leaves the serial path to build."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core.cnl import to_markdown
from core.infra.config import Bm25Config, HdcConfig, OverBudget, load_retrieval_config
from core.infra.diagnostics import Code, Diagnostic
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KnowledgeBase
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.hdc.encoding import encode_units
from core.retrieval.rules import RuleSet
from core.store import SegmentStore, pool
from core.store.pool import prebuild
from core.store.vector_sets import vectors_of
from core.store.vectors import hdc_segment_vectors
from core.text.tokenizer import tokenize
from core.units import Caller, KnowledgeUnit, Role
from tests.support.bells_kb import bell_units
from tests.support.store_kb import write_kb
from tests.unit.store.test_store_patch import stored_blocks

HDC = HdcConfig()
RETRIEVAL = load_retrieval_config(Path(__file__).resolve().parents[3] / "config")


def _same_segments(a: KnowledgeBase, b: KnowledgeBase) -> None:
    assert a.files == b.files
    for file in a.files:
        left, right = a._stored.segments[str(file)], b._stored.segments[str(file)]
        assert left.key == right.key
        assert tuple(left.words) == tuple(right.words)
        assert np.array_equal(left.terms, right.terms) and np.array_equal(left.lengths, right.lengths)
        assert [u.model_dump() for u in left.units] == [u.model_dump() for u in right.units]
    for caller in (Caller(), Caller(tags=frozenset({"crew:night"}), region="NORTH")):
        assert [u.id for u in a.view(caller).units] == [u.id for u in b.view(caller).units]


def test_pool_build_equals_serial_build_segments_and_hdc_vectors(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=3, per_file=30)
    # Bodies of several sentences and numbered steps: the workers encode claim windows from
    # the segment's tokens (core/retrieval/hdc/tokens.py), the serial side from the text.
    (tmp_path / "kb" / "bells.md").write_text(to_markdown(bell_units("bells", 2)), encoding="utf-8")
    pooled_store, serial_store = SegmentStore(tmp_path / "pooled"), SegmentStore(tmp_path / "serial")
    files = sorted((tmp_path / "kb").glob("*.md"))
    assert prebuild(files, pooled_store, HDC, workers=2, min_bytes=0) == len(files)
    assert all(pooled_store.is_cached(file) for file in files)
    pooled = KnowledgeBase.load([tmp_path / "kb"], pooled_store)
    serial = KnowledgeBase.load([tmp_path / "kb"], serial_store)
    # The opening process read every segment the workers wrote and built none itself.
    assert pooled_store.builds == 0 and pooled_store.loads == len(files)
    assert serial_store.builds == len(files)
    _same_segments(pooled, serial)
    # The HDC sets come from the second pass's encoders, after the segments; this process
    # waits for them and encodes none itself.
    pool.wait_for_hdc_sets(pooled_store.root)
    for file in files:
        segment = pooled._stored.segments[str(file)]
        stored = hdc_segment_vectors(pooled_store, segment, HDC)
        assert vectors_of(pooled_store).built["hdc"] == 0
        topic, claim, counts = encode_units(serial._stored.segments[str(file)].units, HDC)
        assert np.array_equal(stored["topic"], topic) and np.array_equal(stored["claim"], claim)
        assert np.array_equal(stored["counts"], counts)
    # The workers saved no block table; the second pass added the one a serial build saves.
    for file in files:
        pooled_table, serial_table = (stored_blocks(tmp_path / root, file) for root in ("pooled", "serial"))
        assert pooled_table is not None and serial_table is not None
        assert np.array_equal(pooled_table, serial_table)


def test_warm_open_and_single_worker_start_no_pool(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=2, per_file=10)
    store = SegmentStore(tmp_path / "cache")
    files = sorted((tmp_path / "kb").glob("*.md"))
    assert prebuild(files, store, None, workers=1, min_bytes=0) == 0
    assert store.builds == 0 and not any(store.is_cached(file) for file in files)
    KnowledgeBase.load([tmp_path / "kb"], store)
    assert prebuild(files, store, None, workers=2, min_bytes=0) == 0  # all cached already


def test_pool_that_cannot_write_falls_back_to_serial_build(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=2, per_file=10)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should be")
    store = SegmentStore(blocker)
    files = sorted((tmp_path / "kb").glob("*.md"))
    assert prebuild(files, store, HDC, workers=2, min_bytes=0) == 0
    kb = KnowledgeBase.load([tmp_path / "kb"], store)
    fresh = KnowledgeBase.load([tmp_path / "kb"], SegmentStore(None))
    assert [u.id for u in kb.view(Caller()).units] == [u.id for u in fresh.view(Caller()).units]


def test_a_whole_kb_budget_passed_while_the_workers_build_stops_them_instead_of_a_serial_retry(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=3, per_file=10)
    store = SegmentStore(tmp_path / "cache")
    files = sorted((tmp_path / "kb").glob("*.md"))

    def over(file: Path) -> None:
        raise OverBudget([Diagnostic(code=Code.KB_TOO_LARGE, message="inputs.maxKbUnits", file=str(file))])

    with pytest.raises(OverBudget):
        prebuild(files, store, None, workers=2, min_bytes=0, built=over)
    assert store.builds == 0 and not list((tmp_path / "cache" / "tmp").glob("*"))


def test_a_first_load_builds_through_the_pool_and_prunes_what_the_workers_wrote(tmp_path: Path, monkeypatch) -> None:
    write_kb(tmp_path / "kb", files=3, per_file=20)
    monkeypatch.setattr(pool, "MIN_POOL_BYTES", 0)
    monkeypatch.setenv(pool.WORKERS_ENV, "2")
    store = SegmentStore(tmp_path / "cache", max_bytes=1)  # any write overflows the bound
    kb = KnowledgeBase.load([tmp_path / "kb"], store, hdc=HDC)
    serial = KnowledgeBase.load([tmp_path / "kb"], SegmentStore(None))
    assert store.builds == 0 and store.loads == 3  # the workers built, this process only read
    assert [u.id for u in kb.view(Caller()).units] == [u.id for u in serial.view(Caller()).units]
    assert not list((tmp_path / "cache" / "segments").glob("*/*"))  # pruned to the bound


def test_a_worker_build_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    import gc

    files = write_kb(tmp_path / "kb", files=2, per_file=5)
    was = gc.isenabled()
    try:
        for enabled, file in zip((True, False), files):
            gc.enable() if enabled else gc.disable()
            assert pool._build_one(str(tmp_path / "cache"), 1 << 30, str(file), None)
            assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
    assert all(SegmentStore(tmp_path / "cache").is_cached(file) for file in files)


def test_a_worker_leaves_the_block_table_to_the_second_pass(tmp_path: Path) -> None:
    (file,) = write_kb(tmp_path / "kb", files=1, per_file=5)
    assert pool._build_one(str(tmp_path / "cache"), 1 << 30, str(file), None)
    assert SegmentStore(tmp_path / "cache").is_cached(file)
    assert stored_blocks(tmp_path / "cache", file) is None


def test_views_cut_their_bm25_parts_from_the_workers_whole_parts(tmp_path: Path, monkeypatch) -> None:
    write_kb(tmp_path / "kb", files=3, per_file=30)
    secret = KnowledgeUnit(
        id="vault::chunk-001::unit-001",
        source_id="vault",
        chunk_id="vault::chunk-001",
        role=Role.DEFINITION,
        topic="kraken ledger",
        claim="The kraken ledger is sealed.",
        acl=("crew:night",),
    )
    shown = secret.model_copy(
        update={"id": "vault::chunk-001::unit-002", "topic": "tide ledger", "claim": "Open.", "acl": ()}
    )
    (tmp_path / "kb" / "vault.md").write_text(to_markdown([secret, shown]), encoding="utf-8")
    store = SegmentStore(tmp_path / "cache")
    files = sorted((tmp_path / "kb").glob("*.md"))
    assert prebuild(files, store, None, Bm25Config(), workers=2, min_bytes=0) == len(files)
    kb = KnowledgeBase.load([tmp_path / "kb"], store)
    builds = []
    original = Bm25Index.build.__func__
    monkeypatch.setattr(
        Bm25Index, "build", classmethod(lambda cls, *a, **k: builds.append(1) or original(cls, *a, **k))
    )
    callers = (Caller(), Caller(tags=frozenset({"crew:night"}), region="NORTH"))
    for caller in callers:
        view = kb.view(caller)
        parts = IndexCache(RETRIEVAL, RuleSet()).for_view(view).bm25
        assert not builds, "every part is cut from a whole part, none built from tokens"
        fresh = original(Bm25Index, view.units, RETRIEVAL.bm25)
        # No term that only units outside the view hold survives the cut (docs/security.md).
        assert set().union(*(part._vocab for part in parts.parts)) == set(fresh._vocab)
        for question in ("tide hive", "varroa swarm forage", "harbour chart datum"):
            tokens = tokenize(question)
            want = fresh.top_k(tokens, [], 10)
            got = parts.top_k(tokens, [], 10)
            assert [u for u, _ in got] == [u for u, _ in want]
            np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=0, atol=1e-9)
    assert len({tuple(u.id for u in kb.view(c).units) for c in callers}) == 2  # the views differ
    public = IndexCache(RETRIEVAL, RuleSet()).for_view(kb.view(Caller())).bm25
    assert not any("kraken" in part._vocab for part in public.parts)


def test_a_damaged_whole_part_is_rebuilt_from_tokens(tmp_path: Path) -> None:
    write_kb(tmp_path / "kb", files=2, per_file=20)
    store = SegmentStore(tmp_path / "cache")
    files = sorted((tmp_path / "kb").glob("*.md"))
    assert prebuild(files, store, None, Bm25Config(), workers=2, min_bytes=0) == len(files)
    wholes = sorted((tmp_path / "cache").rglob("bm25-all-*"))
    assert len(wholes) == len(files)
    for array in wholes[0].glob("*.npy"):
        array.write_bytes(array.read_bytes()[:40])
    kb = KnowledgeBase.load([tmp_path / "kb"], store)
    view = kb.view(Caller())
    parts = IndexCache(RETRIEVAL, RuleSet()).for_view(view).bm25
    fresh = Bm25Index.build(view.units, RETRIEVAL.bm25)
    tokens = tokenize("tide hive varroa")
    assert [u for u, _ in parts.top_k(tokens, [], 10)] == [u for u, _ in fresh.top_k(tokens, [], 10)]
    assert not wholes[0].exists() and wholes[1].exists()  # the damaged one was noticed and dropped


def test_a_cold_opens_view_reads_the_hdc_sets_the_second_pass_encoded(tmp_path: Path, monkeypatch) -> None:
    write_kb(tmp_path / "kb", files=3, per_file=20)
    (tmp_path / "kb" / "bells.md").write_text(to_markdown(bell_units("bells", 2)), encoding="utf-8")
    monkeypatch.setattr(pool, "MIN_POOL_BYTES", 0)
    monkeypatch.setenv(pool.WORKERS_ENV, "2")
    store = SegmentStore(tmp_path / "cache")
    kb = KnowledgeBase.load([tmp_path / "kb"], store, hdc=HDC, bm25=Bm25Config())
    assert store.builds == 0  # the segments came from the pool
    view = kb.view(Caller())
    indexes = IndexCache(RETRIEVAL, RuleSet()).for_view(view)
    indexes.bm25  # the first answer's index needs no HDC set
    index = indexes.hdc  # waits for the encoders, then reads what they wrote
    assert vectors_of(store).built["hdc"] == 0
    serial = KnowledgeBase.load([tmp_path / "kb"], SegmentStore(None)).view(Caller())
    topic, claim, counts = encode_units(serial.units, HDC)
    assert [u.id for u in view.units] == [u.id for u in serial.units]
    for row in range(len(view.units)):
        assert np.array_equal(np.asarray(index.topic[row]), topic[row])
        windows = claim[int(counts[:row].sum()) : int(counts[: row + 1].sum())]
        assert np.array_equal(np.asarray(index._windows(row)), windows)


def test_a_cold_open_loads_the_tagger_while_its_workers_build(tmp_path: Path, monkeypatch) -> None:
    import core.nlp
    from core.infra.progress import LoadProgress
    from core.kernel.session import _tagger_while_building

    started, heard = [], []
    monkeypatch.setattr(core.nlp, "preload", started.append)
    report = _tagger_while_building(heard.append, SegmentStore(tmp_path / "cache"))
    report(LoadProgress("scanning", 0, 3))
    report(LoadProgress("reading", 1, 3))
    assert not started  # a warm open reads segments and starts nothing beside
    report(LoadProgress("building", 0, 3))
    report(LoadProgress("building", 1, 3))
    # Unpacked into the session's own cache folder, once.
    assert started == [tmp_path / "cache"] and [event.stage for event in heard] == [
        "scanning",
        "reading",
        "building",
        "building",
    ]
    _tagger_while_building(None, SegmentStore(None))(LoadProgress("building", 0, 3))  # no listener, no cache
    assert started == [tmp_path / "cache", None]


def test_a_worker_count_in_the_environment_that_is_not_used_is_warned_once(tmp_path: Path, monkeypatch) -> None:
    """A bad `MRPTUI_BUILD_WORKERS` was ignored silently; each open (a reload) reads it again."""
    monkeypatch.setenv(pool.WORKERS_ENV, "four")
    store = SegmentStore(tmp_path / "cache")
    files = [tmp_path / "none.md"]
    assert prebuild(files, store) == prebuild(files, store) == 0
    notes = [n for n in store.take_notes() if n.file == pool.WORKERS_ENV]
    assert [n.message.split(";")[0] for n in notes] == ["$MRPTUI_BUILD_WORKERS='four' is not a whole number of workers"]
    monkeypatch.setenv(pool.WORKERS_ENV, "3")
    assert pool.worker_count() == (3, None)
