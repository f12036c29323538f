"""Units restored lazily from the index store: opening and ranking restore nothing a caller may
not see; a question's context units share the base view's ThinkingDB when they state no fact,
with the answers a build over the extended view gives; an edit re-tokenises only what changed."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import time
from pathlib import Path

import numpy as np

from core.infra.config import load_retrieval_config
from core.kb.indexes import IndexCache
from core.kb.knowledge_base import KBView, KnowledgeBase
from core.kernel.contract import Request
from core.kernel.events import to_json_line
from core.kernel.session import Session
from core.retrieval.bm25.fields import FIELDS
from core.retrieval.bm25.index import _tokenize
from core.retrieval.rules import load_rules
from core.retrieval.thinkingdb import ThinkingDB
from core.store import SegmentStore
from core.store import patch as patch_module
from core.store import segment as segment_module
from core.store import store as store_module
from core.store.codec import StoredUnits
from core.units import Caller
from tests.support.store_kb import write_kb
from tests.unit.store.test_store import CALLERS, assert_same_scores

ROOT = Path(__file__).resolve().parents[2]

FACTS = """## Context Unit relay::chunk-000::unit-000
Role: Definition
Topic: relay alpha
Claim: Relay Alpha uses the copper bus.
Subject: Relay Alpha
Relation: uses
Object: copper bus

## Context Unit relay::chunk-000::unit-001
Role: Definition
Topic: copper bus
Claim: The copper bus provides ground return.
Subject: copper bus
Relation: provides
Object: ground return

## Context Unit relay::chunk-000::unit-002
Role: Explanation
Topic: relay cabinet
Claim: The relay cabinet sits behind the signal box.

## Context Unit relay::chunk-000::unit-003
Role: Definition
Topic: vault relay
Claim: Vault relay uses the silver bus.
Subject: vault relay
Relation: uses
Object: silver bus
Acl: crew:night
"""


def stored_relay_kb(tmp_path: Path) -> KnowledgeBase:
    """The relay KB, opened a second time: its units come from the stored segments."""
    kb_dir = tmp_path / "kb"
    kb_dir.mkdir()
    (kb_dir / "relay.md").write_text(FACTS, encoding="utf-8")
    KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "cache"))
    return KnowledgeBase.load([kb_dir], store=SegmentStore(tmp_path / "cache"))


def relay_view(tmp_path: Path):
    """The public view of the stored relay KB, an index cache and the rules."""
    rules = load_rules(ROOT / "config" / "thinkingdb.json")
    return stored_relay_kb(tmp_path).view(Caller()), IndexCache(load_retrieval_config(ROOT / "config"), rules), rules


def as_context(view, unit_id: str, **changes):
    """A copy of a KB unit as a question's context unit (another id, no location)."""
    update = {"id": "turn::chunk-000::unit-000", "source_id": "turn", "chunk_id": "turn::chunk-000", "location": None}
    return view.get(unit_id).model_copy(update={**update, **changes})


def answers(result) -> tuple:
    proofs = [proof.to_dict() for proof in result.proofs]
    return result.unit_scores, proofs, result.stop_reason, result.rounds, result.derived_count


def restored_rows(kb: KnowledgeBase) -> set[str]:
    """Ids of the units restored so far from the KB's stored segments."""
    ids = set()
    for segment in kb._stored.segments.values():
        units = segment.units
        assert isinstance(units, StoredUnits)
        ids |= {segment.columns.ids[i] for i, unit in enumerate(units._units) if unit is not None}
    return ids


def test_opening_restores_no_unit_and_a_question_never_restores_a_restricted_one(tmp_path, monkeypatch):
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    Session.open([kb_dir])  # builds and stores the segments
    session = Session.open([kb_dir])
    kb = session.kb
    public = Caller()
    view = kb.view(public)
    assert len(view) and restored_rows(kb) == set()
    hidden = set(kb._table.ids) - {view.units.id_at(i) for i in range(len(view))}
    assert hidden  # the KB has units the public caller may not see
    for question in ("Which hive swarm at neap tide?", "How is the varroa mite counted?", "harbour chart datum"):
        events = list(session.run(Request(question=question, caller=public)))
        text = "\n".join(to_json_line(event) for event in events)
        assert not any(unit_id in text for unit_id in hidden)
    restored = restored_rows(kb)
    assert restored and not restored & hidden
    assert all(view.get(unit_id) is None for unit_id in hidden)


def test_searching_a_whole_view_keeps_no_unit_restored(tmp_path, monkeypatch):
    """The KB screen's search reads every unit of the view: it finds the same units as matching
    restored ones, and leaves none held in memory (a million-unit view would take gigabytes)."""
    from mrptui.screens.kb_search import search_chunks, unit_matches

    kb_dir = tmp_path / "kb"
    write_kb(kb_dir)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "cache"))
    Session.open([kb_dir])
    session = Session.open([kb_dir])
    units = session.units(Caller())
    hits = [p for chunk, _ in search_chunks(units, "hive") for p in chunk]
    assert hits and restored_rows(session.kb) == set()
    assert hits == [p for p in range(len(units)) if unit_matches(units[p], "hive")]
    assert restored_rows(session.kb)  # reading by position keeps them, as before


def test_a_view_restores_units_equal_to_a_fresh_read(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir)
    fresh = KnowledgeBase.load([kb_dir], store=SegmentStore(None))
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    stored = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    for caller in CALLERS:
        assert list(stored.view(caller).units) == list(fresh.view(caller).units)
        for file in map(str, stored.files):
            assert list(stored.view(caller).in_file(file)) == list(fresh.view(caller).in_file(file))
    assert stored.units == fresh.units


def test_context_units_without_facts_share_the_base_tdb_with_a_rebuilds_answers(tmp_path):
    base, indexes, rules = relay_view(tmp_path)
    extended = base.with_extra([as_context(base, "relay::chunk-000::unit-002")])
    shared = indexes.for_view(extended).tdb
    assert shared.S is indexes.for_view(base).tdb.S  # the base view's facts, not rebuilt
    rebuilt = ThinkingDB.build(list(extended.units), rules)
    for query in ("What does Relay Alpha use?", "What provides ground return?", "vault relay silver bus"):
        assert answers(shared.query(query)) == answers(rebuilt.query(query))
    for unit_id in (
        "turn::chunk-000::unit-000",
        "relay::chunk-000::unit-002",
        "relay::chunk-000::unit-003",
        "relay::chunk-000::unit-000",
        "nowhere::chunk-000::unit-000",
    ):
        assert shared.explain_absence(unit_id, "What does Relay Alpha use?") == rebuilt.explain_absence(
            unit_id, "What does Relay Alpha use?"
        )


def test_a_context_unit_stating_a_fact_gets_facts_equal_to_a_rebuild(tmp_path):
    base, indexes, rules = relay_view(tmp_path)
    fact = as_context(base, "relay::chunk-000::unit-001", subject="ground return", object="earth stake")
    extended = base.with_extra([fact])
    built = indexes.for_view(extended).tdb
    rebuilt = ThinkingDB.build(list(extended.units), rules)
    assert built.fact_count == rebuilt.fact_count == 3
    query = "What does the copper bus provide?"
    assert answers(built.query(query)) == answers(rebuilt.query(query))


def test_an_edit_tokenises_only_the_units_it_changed(tmp_path, monkeypatch):
    kb_dir = tmp_path / "kb"
    paths = write_kb(kb_dir, files=2, per_file=30)
    store = SegmentStore(tmp_path / "cache")
    kb = KnowledgeBase.load([kb_dir], store=store)
    text = paths[1].read_text(encoding="utf-8")
    # One unit's topic changes, and a line added above the others shifts their locations.
    edited = text.replace("Topic: ", "Topic: quillwort ", 1).replace("\n## Context Unit", "\n\n## Context Unit", 1)
    paths[1].write_text(edited, encoding="utf-8")
    tokenised = []
    # A first read tokenises a file's texts in one batch (the segment module); a reload re-reads
    # blocks in the patch module. Each records the topic of every unit it tokenises.
    batch = segment_module.tokenise_texts
    monkeypatch.setattr(
        segment_module,
        "tokenise_texts",
        lambda texts, vocab: tokenised.extend(texts[:: len(FIELDS)]) or batch(texts, vocab),
    )
    original = patch_module.field_tokens
    monkeypatch.setattr(patch_module, "field_tokens", lambda unit: tokenised.append(unit.topic) or original(unit))
    reloaded = kb.reload()
    assert store.builds == 3 and len(tokenised) == 1 and "quillwort" in tokenised[0]
    assert_same_scores(reloaded, ["quillwort hive", "tide chart", "neap swarm varroa"])
    fresh = KnowledgeBase.load([kb_dir], store=SegmentStore(None))
    assert reloaded.units == fresh.units
    words, terms, lengths = reloaded.view(CALLERS[1]).tokens()
    fresh_words, fresh_terms, fresh_lengths = _tokenize(list(fresh.view(CALLERS[1]).units))
    np.testing.assert_array_equal(lengths, fresh_lengths)
    by_id = {i: w for w, i in words.items()}
    fresh_by_id = {i: w for w, i in fresh_words.items()}
    assert [by_id[t] for t in terms.tolist()] == [fresh_by_id[t] for t in fresh_terms.tolist()]


def test_a_restricted_unit_is_masked_from_its_permission_columns(tmp_path):
    kb = stored_relay_kb(tmp_path)
    night = Caller(tags=frozenset({"crew:night"}), as_of=dt.date(2026, 1, 1))
    assert "relay::chunk-000::unit-003" not in kb.view(Caller())
    assert kb.view(Caller()).get("relay::chunk-000::unit-003") is None
    assert kb.view(night).get("relay::chunk-000::unit-003").acl == ("crew:night",)
    assert restored_rows(kb) == {"relay::chunk-000::unit-003"}


def test_a_segment_replaced_by_another_process_stays_readable_where_it_is_in_use(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    (segment,) = kb._stored.segments.values()
    # What a second process does after an edit: the old key's folder is removed.
    shutil.rmtree(cache / "segments")
    fresh = KnowledgeBase.load([kb_dir], store=SegmentStore(None))
    assert list(kb.view(CALLERS[1]).units) == list(fresh.view(CALLERS[1]).units)
    assert list(segment.words) and segment.stems.lookup(segment.words[0]) is not None
    assert_same_scores(kb, ["hive swarm", "neap tide"])


def test_an_unchanged_file_is_not_read_again_and_a_same_size_edit_is_caught(tmp_path, monkeypatch):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    (path,) = write_kb(kb_dir, files=1)
    old = time.time() - 60
    os.utime(path, (old, old))
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    reads = []
    original = store_module.file_content
    monkeypatch.setattr(store_module, "file_content", lambda file: reads.append(file) or original(file))
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    assert reads == []
    # Same size, mtime put back: the ctime still differs, so the file is read and the edit seen.
    text = path.read_text(encoding="utf-8")
    edited = text.replace("Topic: ", "Topic:X", 1)
    assert len(edited) == len(text)
    path.write_text(edited, encoding="utf-8")
    os.utime(path, (old, old))
    store = SegmentStore(cache)
    kb = KnowledgeBase.load([kb_dir], store=store)
    assert reads and store.builds == 1
    assert kb.units == KnowledgeBase.load([kb_dir], store=SegmentStore(None)).units


def test_a_file_modified_just_before_it_was_read_is_hashed_every_time(tmp_path, monkeypatch):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)  # written now: within the racy window of the first read
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    reads = []
    original = store_module.file_content
    monkeypatch.setattr(store_module, "file_content", lambda file: reads.append(file) or original(file))
    KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    assert len(reads) == 1


def test_hdc_index_over_a_stored_view_restores_only_units_with_their_own_acts(tmp_path):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    shutil.copytree(ROOT / "sample_kb", kb_dir)
    retrieval, rules = load_retrieval_config(ROOT / "config"), load_rules(ROOT / "config" / "thinkingdb.json")
    first = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    IndexCache(retrieval, rules).for_view(first.view(Caller())).hdc  # encodes and stores the vectors
    kb = KnowledgeBase.load([kb_dir], store=SegmentStore(cache))
    config = retrieval.hdc
    index = IndexCache(retrieval, rules).for_view(kb.view(Caller())).hdc
    fresh = KnowledgeBase.load([kb_dir], store=SegmentStore(None)).view(Caller()).units
    own_acts = {u.id for u in fresh if "utility_acts" in u.model_fields_set}
    assert own_acts  # the sample KB has units that name their UtilityActs
    assert restored_rows(kb) == own_acts
    expected = type(index).from_vectors(
        list(fresh), config, index.topic, index.claim, np.diff([*index.claim_start, len(index.claim)]), None
    )
    assert index.unit_ids == expected.unit_ids
    assert np.array_equal(index.role_table[index.role_of], expected.role_table[expected.role_of])
    assert np.array_equal(index.acts_table[index.acts_of], expected.acts_table[expected.acts_of])


def test_a_file_s_units_in_a_view_with_context_units_are_those_a_fresh_view_finds(tmp_path):
    base, _, _ = relay_view(tmp_path)
    file = base.get("relay::chunk-000::unit-002").location.file
    placed = as_context(base, "relay::chunk-000::unit-002", location=base.get("relay::chunk-000::unit-002").location)
    unplaced = as_context(base, "relay::chunk-000::unit-001", id="turn::chunk-000::unit-001")
    # The base view's rows of the file are computed first, as a request's view then reuses them.
    before = [unit.id for unit in base.in_file(file)]
    once = base.with_extra([placed])
    twice = once.with_extra([unplaced])
    for view in (once, twice):
        fresh = KBView(list(view.units), ("fresh", Caller().key, ""), Caller())
        assert [unit.id for unit in view.in_file(file)] == [unit.id for unit in fresh.in_file(file)]
    assert placed.id in [unit.id for unit in twice.in_file(file)]
    assert [unit.id for unit in base.in_file(file)] == before
