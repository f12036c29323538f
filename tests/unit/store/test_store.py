"""The per-file segment store: warm loads, score equality with a from-scratch build, incremental
reload by the file, and segments that cannot be trusted (corrupt, truncated, foreign format)."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from core.infra.config import Bm25Config, load_retrieval_config
from core.infra.diagnostics import Code
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.session import Session
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.rules import RuleSet
from core.store import SegmentStore, default_store
from core.store.codec import SET, StoredUnits, UnitColumns, dump_units
from core.store.private import Mac
from core.text.tokenizer import tokenize
from core.units import Caller, Role
from tests.support.store_kb import WORDS, write_kb

ROOT = Path(__file__).resolve().parents[3]
CALLERS = [
    Caller(),
    Caller(tags=frozenset({"crew:night", "support:eu"}), region="NORTH", as_of=dt.date(2019, 6, 1)),
    Caller(tags=frozenset({"support:eu"}), region="EU"),
]


def segment_folders(root: Path) -> list[Path]:
    return sorted(p for p in (root / "segments").glob("*/*") if not p.name.startswith("."))


def assert_same_scores(kb: KnowledgeBase, questions: list[str]) -> None:
    """Both ways of using segments (one index from stored tokens, one part per file as the
    engine does) score like a from-scratch build of the view."""
    retrieval = load_retrieval_config(ROOT / "config")
    config = retrieval.bm25
    for caller in CALLERS:
        view = kb.view(caller)
        stored = Bm25Index.build(view.units, config, view.tokens())
        parts = IndexCache(retrieval, RuleSet()).for_view(view).bm25
        fresh = Bm25Index.build(view.units, config)
        assert set(stored._vocab) == set(fresh._vocab)
        for question in questions:
            tokens = tokenize(question)
            for roles in ([], [Role.PROCEDURE]):
                expected = fresh.scores(tokens, roles)
                np.testing.assert_allclose(stored.scores(tokens, roles), expected, rtol=0, atol=1e-9)
                by_id = dict(zip(parts.unit_ids, parts.scores(tokens, roles), strict=True))
                np.testing.assert_allclose([by_id[u] for u in fresh.unit_ids], expected, rtol=0, atol=1e-9)
                want = fresh.top_k(tokens, roles, 10)
                assert stored.top_k(tokens, roles, 10) == want
                got = parts.top_k(tokens, roles, 10)
                assert [u for u, _ in got] == [u for u, _ in want]
                np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=0, atol=1e-9)


def test_second_load_reads_every_segment_and_builds_none(tmp_path):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir)
    first_store, second_store = SegmentStore(tmp_path / "cache"), SegmentStore(tmp_path / "cache")
    first = KnowledgeBase.load([kb_dir], store=first_store)
    second = KnowledgeBase.load([kb_dir], store=second_store)
    assert (first_store.builds, first_store.loads) == (4, 0)
    assert (second_store.builds, second_store.loads) == (0, 4)
    assert second.units == first.units
    assert second.diagnostics == first.diagnostics
    assert second.version == first.version
    # A view's version hashes stored unit digests; it equals the one computed from the units.
    for caller in CALLERS:
        versions = {kb.view(caller).version for kb in (first, second, KnowledgeBase.from_units(first.units))}
        assert len(versions) == 1


@pytest.mark.parametrize("kb_source", ["sample", "synthetic"])
def test_scores_from_segments_equal_a_from_scratch_build(tmp_path, kb_source):
    if kb_source == "sample":
        kb_dir = ROOT / "sample_kb"
        questions = ["How do I replace a damaged refurbished laptop?", "What is Helix?", "orion deploy rollback"]
    else:
        kb_dir = tmp_path / "kb"
        write_kb(kb_dir)
        questions = [" ".join(WORDS[i : i + 4]) for i in range(0, len(WORDS), 5)]
    store = tmp_path / "cache"
    KnowledgeBase.load([kb_dir], store=SegmentStore(store))
    warm = SegmentStore(store)
    kb = KnowledgeBase.load([kb_dir], store=warm)
    assert warm.loads > 0 and warm.builds == 0
    assert_same_scores(kb, questions)


def test_a_term_only_restricted_units_use_is_not_in_the_view_index(tmp_path):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=1, per_file=3)
    (kb_dir / "secret.md").write_text(
        "## Context Unit vault::chunk-000::unit-000\nRole: Definition\nTopic: zanzibarite\n"
        "Claim: Zanzibarite is the night crew's word.\nAcl: crew:night\n",
        encoding="utf-8",
    )
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "cache"))
    term = tokenize("zanzibarite")[0]
    assert term not in kb.view(Caller()).tokens()[0]
    assert term in kb.view(Caller(tags=frozenset({"crew:night"}))).tokens()[0]


def test_reload_rebuilds_only_the_edited_files_segment(tmp_path):
    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir)
    store = SegmentStore(tmp_path / "cache")
    kb = KnowledgeBase.load([kb_dir], store=store)
    assert store.builds == 4
    text = paths[2].read_text(encoding="utf-8")
    paths[2].write_text(text.replace("Topic: ", "Topic: quillwort ", 1), encoding="utf-8")
    reloaded = kb.reload()
    assert store.builds == 5 and store.loads == 0
    assert any("quillwort" in u.topic for u in reloaded.units)
    assert_same_scores(reloaded, ["quillwort hive", "tide chart"])
    # Unchanged files keep their segments in memory: nothing is read again.
    assert reloaded.reload().units == reloaded.units
    assert store.builds == 5 and store.loads == 0


def test_a_reload_that_keeps_every_id_shares_the_id_index_and_one_that_renames_rebuilds_it(tmp_path):
    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir)
    store = SegmentStore(tmp_path / "cache")
    kb = KnowledgeBase.load([kb_dir], store=store)
    text = paths[1].read_text(encoding="utf-8")
    paths[1].write_text(text.replace("Topic: ", "Topic: quillwort ", 1), encoding="utf-8")
    edited = kb.reload()
    # Same ids in the same order: the id map and id order are the previous table's, not rebuilt.
    assert edited._table.row_of is kb._table.row_of and edited._table.order is kb._table.order
    renamed = text.replace("::unit-001\n", "::unit-0a1\n", 1)
    paths[1].write_text(renamed, encoding="utf-8")
    again = edited.reload()
    fresh = KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "other-cache"))
    assert again._table.row_of is not edited._table.row_of
    for caller in CALLERS:
        assert [u.id for u in again.view(caller).units] == [u.id for u in fresh.view(caller).units]
        assert list(again.view(caller).units) == list(fresh.view(caller).units)
    assert_same_scores(again, ["quillwort hive", "tide chart"])


def test_a_deleted_file_leaves_the_view(tmp_path):
    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir, files=2)
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "cache"))
    gone = {u.id for u in kb.units if u.source_id == "notes1"}
    paths[1].unlink()
    reloaded = kb.reload()
    assert gone and not gone & {u.id for u in reloaded.view(CALLERS[1]).units}
    assert_same_scores(reloaded, ["tide hive"])


def test_an_edit_back_to_earlier_content_reads_no_stale_segment(tmp_path):
    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir, files=1)
    original = paths[0].read_text(encoding="utf-8")
    cache = tmp_path / "cache"
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    paths[0].write_text(original.replace("Topic: ", "Topic: quillwort ", 1), encoding="utf-8")
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    # The older key of this path was replaced, not kept beside the new one.
    assert len(segment_folders(cache)) == 1
    paths[0].write_text(original, encoding="utf-8")
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    assert store.builds == 1 and not any("quillwort" in u.topic for u in kb.units)


def damage_truncate(folder: Path) -> None:
    terms = folder / "terms.npy"
    terms.write_bytes(terms.read_bytes()[:-8])


def damage_flip(folder: Path) -> None:
    units = folder / "units.jsonl"
    data = bytearray(units.read_bytes())
    data[len(data) // 2] ^= 0x20
    units.write_bytes(bytes(data))


def damage_format(folder: Path) -> None:
    meta = json.loads((folder / "meta.json").read_text())
    meta["format"] = 999
    (folder / "meta.json").write_text(json.dumps(meta))


def damage_meta(folder: Path) -> None:
    (folder / "meta.json").write_text("{not json")


def damage_shape(folder: Path) -> None:
    """Consistent digests (made with the cache's own key) over arrays whose shape no longer fits
    the units."""
    meta = json.loads((folder / "meta.json").read_text())
    np.save(folder / "lengths.npy", np.zeros((1, 7), dtype=np.int32))
    meta["macs"]["lengths.npy"] = Mac.of_root(folder.parents[2]).of_bytes((folder / "lengths.npy").read_bytes())
    (folder / "meta.json").write_text(json.dumps(meta))


@pytest.mark.parametrize("damage", [damage_truncate, damage_flip, damage_format, damage_meta, damage_shape])
def test_an_untrustworthy_segment_is_rebuilt_with_a_warning(tmp_path, damage):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=2)
    cache = tmp_path / "cache"
    good = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    damage(segment_folders(cache)[0])
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    assert (store.builds, store.loads) == (1, 1)
    assert kb.units == good.units
    warnings = [d for d in kb.diagnostics if d.code is Code.INDEX_CACHE]
    assert len(warnings) == 1 and "rebuilt" in warnings[0].message
    assert_same_scores(kb, ["tide hive"])
    # The rebuilt segment was saved again: the next load reads both.
    again = SegmentStore(cache)
    KnowledgeBase.load([kb_dir], store=again)
    assert (again.builds, again.loads) == (0, 2)


def test_an_unwritable_cache_runs_without_it_and_says_so_once(tmp_path):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=2)
    # A file where the cache folder should be: no process, root included, can write under it.
    cache = tmp_path / "cache"
    cache.write_text("not a folder")
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    again = KnowledgeBase.load([kb_dir], store=store)
    warnings = [d for d in kb.diagnostics if d.code is Code.INDEX_CACHE]
    assert len(warnings) == 1 and "without it" in warnings[0].message
    assert not [d for d in again.diagnostics if d.code is Code.INDEX_CACHE]
    assert again.units == kb.units and store.builds == 4
    assert_same_scores(again, ["tide hive"])


CHILD = """
import sys
from pathlib import Path
from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller
from core.retrieval.bm25.index import Bm25Index
from core.retrieval.hdc.encoding import encode_query
from core.kb.indexes import IndexCache
from core.retrieval.rules import RuleSet
from core.infra.config import Bm25Config, load_retrieval_config
from core.text.tokenizer import tokenize
kb = KnowledgeBase.load([Path(sys.argv[1])])
view = kb.view(Caller())
index = Bm25Index.build(view.units, Bm25Config(), view.tokens())
import core.text.tokenizer
print(len(kb.units), index.top_k(tokenize(sys.argv[2]), [], 3), core.text.tokenizer._stemmer.cache_info().currsize > 0)
"""


def run_child(kb_dir: Path, cache: Path, question: str) -> subprocess.Popen:
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache)}
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(kb_dir), question], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )


def test_two_processes_on_one_kb_both_answer_and_leave_whole_segments(tmp_path):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=6, per_file=60)
    cache = tmp_path / "cache"
    question = "hive brood tide"
    children = [run_child(kb_dir, cache, question) for _ in range(2)]
    outputs = [child.communicate(timeout=120)[0] for child in children]
    assert all(child.returncode == 0 for child in children)
    # The last word says whether that child needed the stemmer: only one of them may have built.
    assert outputs[0].rsplit(" ", 1)[0] == outputs[1].rsplit(" ", 1)[0]
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    view = kb.view(Caller())
    expected = Bm25Index.build(view.units, Bm25Config()).top_k(tokenize(question), [], 3)
    assert outputs[0].startswith(f"{len(kb.units)} {expected}")
    store = SegmentStore(cache)
    KnowledgeBase.load([kb_dir], store=store)
    assert (store.builds, store.loads) == (0, 6)
    assert len(segment_folders(cache)) == 6


def test_a_warm_cache_answers_known_words_without_loading_the_stemmer(tmp_path):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=2)
    cache = tmp_path / "cache"
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    child = run_child(kb_dir, cache, "Which hive swarm at neap tide?")
    output = child.communicate(timeout=60)[0]
    assert child.returncode == 0 and output.strip().endswith("False")
    # A word outside the KB does need the stemmer (so the check above can fail).
    child = run_child(kb_dir, cache, "Which quillworts flowered?")
    assert child.communicate(timeout=60)[0].strip().endswith("True")


def test_session_reload_rebuilds_one_segment_and_answers_from_the_edit(tmp_path, config_path):
    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir)
    session = Session([kb_dir], config_path)
    store = default_store()
    builds = store.builds
    text = paths[1].read_text(encoding="utf-8")
    paths[1].write_text(text.replace("Topic: ", "Topic: quillwort ", 1), encoding="utf-8")
    session.indexes.for_view(session.view(CALLERS[1])).bm25
    parts = session.indexes.parts.builds
    session.reload()
    assert store.builds == builds + 1
    view = session.view(CALLERS[1])
    index = session.indexes.for_view(view).bm25
    # Only the edited file's BM25 part is built again; the other three are reused.
    assert session.indexes.parts.builds == parts + 1
    assert index.top_k(tokenize("quillwort"), [], 1)[0][0].startswith("notes1::chunk-000::unit-000")
    assert not session.hdc_ready(CALLERS[1])
    session.warm_up_hdc(CALLERS[1])
    assert session.hdc_ready(CALLERS[1])


def test_stored_units_equal_the_validated_originals_field_by_field(tmp_path):

    units = KnowledgeBase.load([ROOT / "sample_kb"], store=SegmentStore(None)).units
    columns = UnitColumns.of(units)
    restored = StoredUnits(*dump_units(units), UnitColumns.load(columns.dump(), columns.cols).cols[:, SET])
    assert restored.restored() == 0 and restored[3] == units[3] and restored.restored() == 1
    assert tuple(restored) == units
    for before, after in zip(units, restored, strict=True):
        assert after.model_dump_json() == before.model_dump_json()
        assert after.model_fields_set == before.model_fields_set
        assert type(after.role) is Role and all(type(a).__name__ == "Act" for a in after.acts)
    with pytest.raises((ValueError, KeyError)):
        UnitColumns.load(columns.dump().replace(b'"topic"', b'"topik"', 1), columns.cols)


def test_unit_json_is_each_units_model_dump_json_in_utf8():
    # Unit digests and restored units rest on these bytes: the serializer's own bytes must be
    # what `model_dump_json` gives, non-ASCII text, dates and permission fields included.
    units = list(KnowledgeBase.load([ROOT / "sample_kb"], store=SegmentStore(None)).units)
    units.append(
        units[0].model_copy(
            update={
                "claim": "Glockengießerei: ΣΑΣ naïve — \u00e9t\u00e9 \U0001f514",
                "region": "NORTH",
                "acl": ("crew:night",),
            }
        )
    )
    blob, offsets = dump_units(units)
    assert [blob[start:end] for start, end in zip(offsets[:-1], offsets[1:], strict=True)] == [
        unit.model_dump_json().encode() for unit in units
    ]


def test_stems_of_words_outside_the_kb_are_kept_for_the_next_process(tmp_path):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=1)
    cache = tmp_path / "cache"
    question = "Do quillworts grow beside estuaries?"
    first = run_child(kb_dir, cache, question).communicate(timeout=60)[0]
    second = run_child(kb_dir, cache, question).communicate(timeout=60)[0]
    assert first.strip().endswith("True") and second.strip().endswith("False")
    assert first.split(" True")[0] == second.split(" False")[0]


def test_a_writer_killed_mid_segment_leaves_nothing_a_reader_uses(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    good = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    (folder,) = segment_folders(cache)
    shutil.rmtree(folder)
    # What kill -9 during a write leaves: a temp folder with some files and no meta.json.
    partial = folder.parent / f".tmp-{folder.name}-dead"
    partial.mkdir()
    (partial / "units.jsonl").write_bytes(b'{"fields": [')
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    assert (store.builds, store.loads) == (1, 0) and kb.units == good.units
    assert segment_folders(cache) == [folder]


def test_the_cache_drops_least_recently_written_files_beyond_its_bound(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    paths = write_kb(kb_dir, files=3)
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    sizes = sorted(sum(p.stat().st_size for p in f.rglob("*") if p.is_file()) for f in segment_folders(cache))
    for age, folder in enumerate(segment_folders(cache)):
        for file in folder.rglob("*"):
            os.utime(file, (1_000_000 + age, 1_000_000 + age))
    newest = segment_folders(cache)[-1]
    store = SegmentStore(cache, max_bytes=sizes[-1] + 1)
    store.prune()
    assert segment_folders(cache) == [newest]
    assert KnowledgeBase.load([kb_dir], store=SegmentStore(cache)).units  # the rest rebuild
    assert len(segment_folders(cache)) == len(paths)


def test_only_a_load_that_wrote_segments_walks_the_cache_to_prune(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    paths = write_kb(kb_dir, files=3)
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    # A warm load writes nothing, so it cannot have grown the cache: even a bound it breaks is
    # left for the next load that writes (a warm open must not cost O(cache)).
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache, max_bytes=1))
    assert len(segment_folders(cache)) == len(paths)
    paths[0].write_text(paths[0].read_text(encoding="utf-8") + "\n", encoding="utf-8")
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache, max_bytes=1))
    assert segment_folders(cache) == []


def test_bm25_parts_are_stored_and_a_new_process_builds_none(tmp_path, monkeypatch):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=3)
    retrieval = load_retrieval_config(ROOT / "config")
    first = (
        IndexCache(retrieval, RuleSet())
        .for_view(KnowledgeBase.load([kb_dir], store=SegmentStore(cache)).view(CALLERS[1]))
        .bm25
    )
    stored = sorted((cache / "segments").glob("*/*/bm25-*.idx"))
    assert len(stored) == 3
    # A damaged part is dropped and rebuilt; the other two are read back without any build.
    damaged = stored[0] / "data.npy"
    damaged.write_bytes(damaged.read_bytes()[:-10])
    builds = []
    original = Bm25Index.build.__func__
    monkeypatch.setattr(
        Bm25Index, "build", classmethod(lambda cls, *a, **k: builds.append(1) or original(cls, *a, **k))
    )
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    second = IndexCache(retrieval, RuleSet()).for_view(kb.view(CALLERS[1])).bm25
    assert len(builds) == 1
    for question in ("tide hive", "varroa mite swarm", "harbour"):
        terms = tokenize(question)
        assert second.top_k(terms, [Role.DEFINITION], 10) == first.top_k(terms, [Role.DEFINITION], 10)
    assert_same_scores(kb, ["tide hive"])


def test_warm_up_merges_bm25_parts_into_one_saved_index_the_next_session_reads(tmp_path, config_path, monkeypatch):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    session = Session([kb_dir], config_path)
    caller = CALLERS[1]
    parts = session.indexes.for_view(session.view(caller)).bm25
    session.warm_up(caller)
    merged = session.indexes.for_view(session.view(caller)).bm25
    assert isinstance(merged, Bm25Index) and len(list((tmp_path / "cache" / "views").glob("*.idx"))) == 1
    builds = []
    original = Bm25Index.build.__func__
    monkeypatch.setattr(
        Bm25Index, "build", classmethod(lambda cls, *a, **k: builds.append(1) or original(cls, *a, **k))
    )
    again = Session([kb_dir], config_path).indexes
    reread = again.for_view(KnowledgeBase.load([kb_dir]).view(caller)).bm25
    assert isinstance(reread, Bm25Index) and not builds
    for question in ("tide hive", "varroa mite swarm", "harbour chart datum"):
        terms = tokenize(question)
        want = parts.top_k(terms, [Role.DEFINITION], 10)
        for index in (merged, reread):
            got = index.top_k(terms, [Role.DEFINITION], 10)
            assert [u for u, _ in got] == [u for u, _ in want]
            np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=0, atol=1e-9)


def test_a_reload_walks_the_cache_only_when_its_saves_may_have_broken_the_bound(tmp_path, monkeypatch):
    from core.store import store as store_module
    from core.store.contents import cache_entries

    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir, files=2)
    store = SegmentStore(tmp_path / "cache")
    kb = KnowledgeBase.load([kb_dir], store=store)
    walks = []
    real = store_module.prune_cache
    monkeypatch.setattr(store_module, "prune_cache", lambda root, limit: walks.append(root) or real(root, limit))
    text = paths[0].read_text(encoding="utf-8")
    for n in range(2):
        paths[0].write_text(text.replace("Topic: ", f"Topic: edit{n} ", 1), encoding="utf-8")
        kb = kb.reload()
    assert walks == []  # the first load's prune measured the cache; two edits fit the bound
    total = sum(entry.bytes for entry in cache_entries(tmp_path / "cache"))
    store.max_bytes = total + 10
    paths[0].write_text(text.replace("Topic: ", "Topic: edit2 ", 1), encoding="utf-8")
    kb = kb.reload()
    assert len(walks) == 1
    assert sum(entry.bytes for entry in cache_entries(tmp_path / "cache")) <= store.max_bytes


def test_cache_files_are_replaced_whole_and_readable_only_by_their_owner(tmp_path: Path) -> None:
    import stat

    from core.store.atomic import replace_file

    target = tmp_path / "meta.json"
    replace_file(target, b"first")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    target.chmod(0o644)
    replace_file(target, b"second")
    assert target.read_bytes() == b"second" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["meta.json"]  # no temp file left behind


def test_merged_index_of_files_whose_unit_ids_interleave_scores_like_a_fresh_build(tmp_path, config_path, monkeypatch):
    """The merged index holds the view's rows file after file; ids that alternate between two
    files (one holds the even chunks, the other the odd ones) must not mislabel a row."""
    from core.cnl import to_markdown
    from core.units import KnowledgeUnit

    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    rng = __import__("random").Random(5)
    for name, numbers in (("even.md", range(100, 140, 2)), ("odd.md", range(101, 140, 2))):
        units = [
            KnowledgeUnit(
                id=f"reef::chunk-{n}::unit-000",
                source_id="reef",
                chunk_id=f"reef::chunk-{n}",
                role=Role.DEFINITION,
                topic=" ".join(rng.choices(WORDS, k=3)),
                claim=" ".join(rng.choices(WORDS, k=12)),
            )
            for n in numbers
        ]
        (kb_dir / name).write_text(to_markdown(units), encoding="utf-8")
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    session = Session([kb_dir], config_path)
    caller = Caller()
    session.warm_up(caller)
    merged = session.indexes.for_view(session.view(caller)).bm25
    assert isinstance(merged, Bm25Index)
    view_ids = [u.id for u in session.view(caller).units]
    assert merged.unit_ids != view_ids and sorted(merged.unit_ids) == sorted(view_ids)  # file order, not id order
    fresh = Bm25Index.build(list(session.view(caller).units), load_retrieval_config(ROOT / "config").bm25)
    reread = Session([kb_dir], config_path).indexes.for_view(KnowledgeBase.load([kb_dir]).view(caller)).bm25
    for question in ("tide hive", "varroa swarm", "chart datum sounding"):
        tokens = tokenize(question)
        for index in (merged, reread):
            assert index.top_k(tokens, [], 10) == fresh.top_k(tokens, [], 10)
            by_id = dict(zip(index.unit_ids, index.scores(tokens, []), strict=True))
            np.testing.assert_allclose([by_id[u] for u in fresh.unit_ids], fresh.scores(tokens, []), rtol=0, atol=1e-12)


def mapped_file_of(array: np.ndarray) -> bool:
    """Whether `array` reads a memory-mapped file (as `core.store.mapped` maps large arrays)."""
    import mmap

    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, memoryview) and isinstance(base.obj, mmap.mmap)


def test_a_cold_open_maps_its_merged_bm25_index_back_and_ranks_as_a_warm_open(tmp_path, config_path, monkeypatch):
    """A cold open writes the merged index and then reads it as a warm open does, mapped: kept
    as built, its arrays (~0.9 GB at 1M units) stayed in memory for the session."""
    from core.store import mapped

    monkeypatch.setattr(mapped, "SMALL_BYTES", 0)  # this KB's arrays are small: map them all
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=3)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    caller = CALLERS[1]
    cold = Session([kb_dir], config_path)
    cold.warm_up(caller)
    merged = cold.indexes.for_view(cold.view(caller)).bm25
    assert isinstance(merged, Bm25Index)
    arrays = merged.to_arrays()[2]
    assert all(mapped_file_of(arrays[name]) for name in ("keys", "tf", "indices", "data", "df", "norms"))
    warm = Session([kb_dir], config_path)
    reread = warm.indexes.for_view(warm.view(caller)).bm25
    assert isinstance(reread, Bm25Index) and reread is not merged
    for question in ("tide hive", "varroa mite swarm", "harbour chart datum", "queen"):
        terms = tokenize(question)
        for roles in ([], [Role.DEFINITION]):
            assert merged.top_k(terms, roles, 10) == reread.top_k(terms, roles, 10)
            assert merged.top_k(terms, roles, 10)
            np.testing.assert_array_equal(merged.scores(terms, roles), reread.scores(terms, roles))


def test_a_merged_index_that_cannot_be_written_is_kept_as_built(tmp_path, config_path, monkeypatch):
    from core.store import stored

    def unwritable(*args, **kwargs):
        raise OSError("disk full")

    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=3)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    caller = CALLERS[1]
    session = Session([kb_dir], config_path)
    parts = session.indexes.for_view(session.view(caller)).bm25
    monkeypatch.setattr(stored, "write_arrays", unwritable)
    session.warm_up(caller)
    merged = session.indexes.for_view(session.view(caller)).bm25
    assert isinstance(merged, Bm25Index) and not list((tmp_path / "cache" / "views").glob("*.idx"))
    for question in ("tide hive", "varroa mite swarm"):
        terms = tokenize(question)
        got, want = merged.top_k(terms, [Role.DEFINITION], 10), parts.top_k(terms, [Role.DEFINITION], 10)
        assert [u for u, _ in got] == [u for u, _ in want] and got
        np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=0, atol=1e-9)
