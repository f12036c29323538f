"""`mrptui eval --beir` and the JSONL KB format, on a tiny BEIR collection the tests write."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from benchmarks.ir_variants import variants
from core.eval import beir as ireval
from core.infra.config import ConfigError, load_retrieval_config
from core.kb.knowledge_base import KnowledgeBase
from core.units import Caller
from mrptui.cli import main
from tests.support.beir_files import write_beir


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "bees")


def test_documents_load_as_units_title_topic_text_claim(beir: Path) -> None:
    collection = ireval.load_beir(beir)
    unit = {u.id: u for u in collection.kb.units}["d3"]
    assert unit.topic == "Honey extraction"
    assert unit.claim.startswith("Capped frames")
    assert unit.location.line == 3
    assert set(collection.queries) == {"q1", "q2", "q3"}
    assert collection.qrels["q1"] == {"d1": 2, "d4": 1}


def test_every_lane_and_fusion_is_measured(beir: Path) -> None:
    collection = ireval.load_beir(beir)
    seen = []
    runs = ireval.run_systems(
        collection, load_retrieval_config(), progress=lambda done, total: seen.append((done, total))
    )
    assert seen[-1] == (3, 3) and len(seen) == 3
    measures = ireval.measure(runs, collection.qrels)
    assert set(measures) == {"bm25", "hdc", "fusion:weighted", "fusion:rrf"}
    # BM25 ranks each query's best document first; d4 (judged 1 for q1) shares no word with q1.
    # trec_eval's nDCG gain is the grade: q1 = 2 / (2 + 1/log2(3)), q2 = q3 = 1.
    assert measures["bm25"] == {
        "ndcg@10": pytest.approx((0.7602 + 2) / 3, abs=1e-4),
        "recall@100": 0.8333,
        "mrr@10": 1.0,
    }
    for values in measures.values():
        assert set(values) == set(ireval.MEASURES)
        assert all(0.0 <= v <= 1.0 for v in values.values())


def test_a_query_with_no_results_counts_as_zero() -> None:
    qrels = {"a": {"x": 1}, "b": {"y": 1}}
    measures = ireval.measure({"s": {"a": {"x": 1.0}, "b": {}}}, qrels)
    assert measures["s"] == {"ndcg@10": 0.5, "recall@100": 0.5, "mrr@10": 0.5}


def test_cli_json_shape_and_run_files(beir: Path, tmp_path: Path, capsys) -> None:
    code = main(["eval", "--beir", str(beir), "--json", "--run-dir", str(tmp_path / "runs")])
    out, err = capsys.readouterr()
    assert code == 0
    document = json.loads(out)
    assert document["collection"] == "bees" and document["queries"] == 3
    assert set(document["systems"]) == {"bm25", "hdc", "fusion:weighted", "fusion:rrf"}
    assert set(document["systems"]["bm25"]) == {"ndcg@10", "recall@100", "mrr@10"}
    assert "3/3 queries" in err
    lines = (tmp_path / "runs" / "fusion-rrf.trec").read_text().splitlines()
    qid, q0, doc, rank, score, tag = lines[0].split()
    assert (qid, q0, rank, tag) == ("q1", "Q0", "1", "mrptui-fusion-rrf")
    assert doc == "d1" and float(score) > 0
    assert sorted((tmp_path / "runs").iterdir()) == sorted(
        tmp_path / "runs" / ireval.run_file_name(s) for s in document["systems"]
    )


def test_run_files_are_private_and_never_replace_a_users_file(beir: Path, tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    mask = os.umask(0)
    try:
        assert main(["eval", "--beir", str(beir), "--run-dir", str(runs)]) == 0
    finally:
        os.umask(mask)
    assert stat.S_IMODE(runs.stat().st_mode) == 0o700
    assert {stat.S_IMODE(path.stat().st_mode) for path in runs.iterdir()} == {0o600}
    assert main(["eval", "--beir", str(beir), "--run-dir", str(runs)]) == 0, "a run file of ours is replaced"
    capsys.readouterr()
    mine = runs / ireval.run_file_name("bm25")
    mine.write_text("my notes on bm25\n")
    assert main(["eval", "--beir", str(beir), "--run-dir", str(runs)]) == 2
    assert "not written by mrptui" in capsys.readouterr().err
    assert mine.read_text() == "my notes on bm25\n"


def test_cli_markdown_table(beir: Path, capsys) -> None:
    assert main(["eval", "--beir", str(beir)]) == 0
    out = capsys.readouterr().out
    assert "| bm25 | 0." in out and "| fusion:weighted |" in out


def test_missing_evaluation_library_is_a_clear_error(beir: Path, capsys, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_measures", None)
    assert main(["eval", "--beir", str(beir)]) == 2
    assert "pip install 'mrptui[test]'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("file", "content", "expected", "status"),
    [
        # A bad document is withdrawn and counted; the rest of the collection is scored (issue 35).
        ("corpus.jsonl", '{"_id": "d1", "title": "t", "text": "x"}\n{"title": "no id"}\n', "corpus.jsonl:2", 0),
        ("corpus.jsonl", '{"_id": "d1", "title": "t", "text": "x"}\n{not json\n', "corpus.jsonl:2", 0),
        ("queries.jsonl", '{"_id": "q1"}\n', "queries.jsonl:1", 2),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1 d1 high\n", "test.tsv:2", 2),
    ],
)
def test_bad_lines_name_file_and_line(beir: Path, capsys, file, content, expected, status) -> None:
    (beir / file).write_text(content, encoding="utf-8")
    assert main(["eval", "--beir", str(beir)]) == status
    err = capsys.readouterr().err
    assert expected in err
    if status == 0:
        assert "withdrew 1 document(s)" in err and "the rest is scored" in err


def test_missing_files_and_bad_arguments(tmp_path: Path, beir: Path, capsys) -> None:
    (beir / "qrels" / "test.tsv").unlink()
    with pytest.raises(ConfigError, match="test.tsv"):
        ireval.load_beir(beir)
    assert main(["eval", "--beir", str(tmp_path / "nope")]) == 2
    assert main(["eval"]) == 2
    assert main(["eval", "q.json", "--beir", str(beir)]) == 2
    assert "either QUERIES.json or --beir" in capsys.readouterr().err


# --- the JSONL KB format --------------------------------------------------------------------------


def test_jsonl_kb_with_permission_fields_is_filtered_before_ranking(tmp_path: Path, capsys) -> None:
    kb = tmp_path / "kb.jsonl"
    lines = [
        {"_id": "open", "title": "Glacier retreat", "text": "Alpine glaciers lost a third of their ice since 1980."},
        {"id": "staff", "title": "Glacier survey budget", "text": "The glacier survey budget is 40k.", "acl": "staff"},
        {"_id": "eu", "title": "Glacier tours", "text": "Glacier tours run in June.", "region": "EU"},
        {"_id": "old", "title": "Glacier permits", "text": "Glacier permits cost 5.", "effectiveTo": "2020-01-01"},
        {
            "_id": "howto",
            "title": "Crampons",
            "text": "Strap the crampons tight.",
            "role": "Procedure",
            "effective_from": "2021-01-01",
        },
    ]
    kb.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n", encoding="utf-8")
    loaded = KnowledgeBase.load([kb])
    assert not loaded.diagnostics
    public = {u.id for u in loaded.view(Caller())}
    assert public == {"open", "howto"}
    assert {u.id for u in loaded.view(Caller(tags=frozenset({"staff"}), region="eu"))} == {
        "open",
        "staff",
        "eu",
        "howto",
    }
    assert {u.id: u for u in loaded.units}["howto"].procedure == "Strap the crampons tight."
    assert main(["--kb", str(kb), "retrieve", "glacier survey budget", "--kb-plugin", "kb-fast", "--json"]) == 0
    ids = {c["id"] for c in json.loads(capsys.readouterr().out)["candidates"]}
    assert ids and ids <= public


def test_jsonl_document_without_title_gets_a_topic_from_its_text(tmp_path: Path) -> None:
    kb = tmp_path / "notes.jsonl"
    kb.write_text(json.dumps({"_id": 7, "text": "one two three four five six seven eight nine ten"}) + "\n")
    unit = KnowledgeBase.load([kb]).units[0]
    assert (unit.id, unit.topic, unit.source_id) == ("7", "one two three four five six seven eight", "notes")


def test_jsonl_bad_lines_are_diagnostics_and_the_rest_loads(tmp_path: Path) -> None:
    kb = tmp_path / "kb.jsonl"
    kb.write_text('{"_id": "a", "text": "fine"}\n[1, 2]\n{"_id": "b"}\n{"_id": "c", "text": "x", "acl": 5}\n')
    loaded = KnowledgeBase.load([kb])
    assert [u.id for u in loaded.units] == ["a"]
    assert [d.line for d in loaded.diagnostics] == [2, 3, 4]
    assert all(d.file == str(kb) for d in loaded.diagnostics)


# --- fusion never below BM25 alone ---------------------------------------------------------------

# Each query's first document uses its words; the second says the same thing in another word form
# the stemmer does not unify ("inflammatory" / "inflammation"), which only HDC's character n-grams
# can bridge; the rest are distractors.
FORMS = [
    ("inflammatory", "inflammation", "joint pain"),
    ("hypercholesterolemia", "cholesterol", "blood fat"),
    ("antioxidants", "oxidation", "berry juice"),
    ("cardiovascular", "cardiology", "heart muscle"),
]


def test_fusion_is_never_below_bm25_alone(tmp_path: Path) -> None:
    docs, queries, qrels = [], {}, {}
    for i, (asked, variant, topic) in enumerate(FORMS):
        docs.append((f"a{i}", topic.title(), f"Studies of {asked} markers and {topic} in adults."))
        docs.append(
            (f"b{i}", f"{variant.title()} notes", f"Clinics track {variant} when patients report {topic.split()[1]}.")
        )
        docs.append((f"c{i}", "Garden diary", f"Seedlings of type {i} need light and water every day."))
        queries[f"q{i}"] = f"{asked} {topic.split()[0]}"
        qrels[f"q{i}"] = {f"a{i}": 2, f"b{i}": 1}
    collection = ireval.load_beir(write_beir(tmp_path / "forms", docs, queries, qrels))
    measures = ireval.measure(ireval.run_systems(collection, load_retrieval_config()), collection.qrels)
    bm25 = measures["bm25"]
    assert measures["fusion:weighted"]["ndcg@10"] >= bm25["ndcg@10"]
    assert measures["fusion:rrf"]["ndcg@10"] >= bm25["ndcg@10"] - 0.005
    for system in ("fusion:weighted", "fusion:rrf"):
        assert measures[system]["recall@100"] >= bm25["recall@100"]
    # The variant documents are where HDC earns its place: fusion finds what BM25 alone misses.
    assert measures["fusion:weighted"]["recall@100"] > bm25["recall@100"]


def test_folder_scans_skip_jsonl_so_a_trace_beside_the_kb_is_not_read(tmp_path: Path) -> None:
    folder = tmp_path / "kb"
    folder.mkdir()
    (folder / "docs.jsonl").write_text(json.dumps({"_id": "a", "text": "glacier"}) + "\n")
    (folder / "trace.jsonl").write_text('{"seq": 1, "kind": "run_started"}\n')
    (folder / "notes.md").write_text(
        "## Context Unit n::chunk-000::unit-000\nRole: Definition\nTopic: Moraine\nClaim: Rock left by ice.\n"
    )
    loaded = KnowledgeBase.load([folder])
    assert [u.id for u in loaded.units] == ["n::chunk-000::unit-000"] and not loaded.diagnostics
    assert not loaded.holds(folder / "trace.jsonl")
    assert [u.id for u in KnowledgeBase.load([folder / "docs.jsonl"]).units] == ["a"]


def test_a_jsonl_corpus_may_exceed_the_text_file_cap(tmp_path: Path) -> None:
    """One unit per line, no sentence parsing: JSONL has its own, larger cap (public IR corpora)."""
    from core.cnl.source import MAX_FILE_BYTES

    kb = tmp_path / "big.jsonl"
    line = {"title": "Tidal power", "text": "Tidal barrages turn the rise and fall of the sea into power. " * 30}
    count = MAX_FILE_BYTES // len(json.dumps({"_id": "d0000", **line})) + 50
    kb.write_text("".join(json.dumps({"_id": f"d{i:04d}", **line}) + "\n" for i in range(count)), encoding="utf-8")
    assert kb.stat().st_size > MAX_FILE_BYTES
    loaded = KnowledgeBase.load([kb])
    assert len(loaded.units) == count and not loaded.diagnostics


def test_the_variants_benchmark_reproduces_the_shipped_fusion(beir: Path) -> None:
    """benchmarks/ir_variants.py measures alternatives beside the engine's own systems: its
    "best 1" + "weighted" cell must be exactly what `eval --beir` reports for fusion:weighted."""
    collection = ireval.load_beir(beir)
    config = load_retrieval_config()
    table = variants(collection, config, feedback=("none", "best 1", "by score 2, q=1"))
    shipped = ireval.measure(ireval.run_systems(collection, config), collection.qrels)
    assert config.hdc.feedback_units == 1
    assert table["best 1"]["weighted"] == shipped["fusion:weighted"]
    assert table["best 1"]["rrf"] == shipped["fusion:rrf"]
    assert set(table["none"]) == {
        "weighted",
        "no bonus",
        "rrf",
        "hdc ÷ top",
        "z 0.2",
        "z 0.5",
        "z 1.0",
        "min-max 0.2",
        "min-max 0.5",
    }
