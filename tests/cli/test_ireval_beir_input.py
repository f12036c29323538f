"""`eval --beir` on collections as they are published: documents with neither title nor text are
skipped and counted (Cranfield has two), and a query that is itself a document (ArguAna, Quora) does
not find itself, as BEIR's scoring has it (issue 28)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cnl.jsonl import read_jsonl
from core.eval import beir as ireval
from core.infra.config import ConfigError, load_retrieval_config
from core.infra.diagnostics import Code
from mrptui.cli import main

# A city tram network: five documents, two of them empty as published (no title, no text; blanks).
TRAM_DOCS = [
    {"_id": "t1", "title": "Tram depot", "text": "Trams are washed and serviced overnight at the northern depot."},
    {"_id": "t2", "title": "", "text": ""},
    {"_id": "t3", "title": "Overhead line", "text": "The overhead line feeds 750 volts to the tram pantograph."},
    {"_id": "t4", "text": "   ", "metadata": {}},
    {
        "_id": "t5",
        "title": "Tram tickets",
        "text": "Tickets are validated on board; a day pass covers every tram line.",
    },
]
TRAM_QUERIES = {"q1": "where are trams serviced overnight", "q2": "what voltage does the overhead line carry"}
TRAM_QRELS = {"q1": {"t1": 1}, "q2": {"t3": 1}}


def write_collection(folder: Path, docs: list[dict], queries: dict[str, str], qrels: dict[str, dict[str, int]]) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()))
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, ds in qrels.items() for d, s in ds.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def trams(tmp_path: Path) -> Path:
    return write_collection(tmp_path / "trams", TRAM_DOCS, TRAM_QUERIES, TRAM_QRELS)


def test_an_empty_document_is_its_own_diagnostic_in_the_jsonl_reader() -> None:
    text = "".join(json.dumps(d) + "\n" for d in TRAM_DOCS)
    units, problems = read_jsonl(text, "corpus.jsonl")
    assert [u.id for u in units] == ["t1", "t3", "t5"]
    assert [(d.code, d.line, d.is_error) for d in problems] == [
        (Code.EMPTY_DOCUMENT, 2, True),
        (Code.EMPTY_DOCUMENT, 4, True),
    ]


def test_empty_documents_are_skipped_counted_and_the_rest_scored(trams: Path) -> None:
    collection = ireval.load_beir(trams)
    assert sorted(u.id for u in collection.kb.units) == ["t1", "t3", "t5"]
    assert [d.line for d in collection.skipped] == [2, 4]
    measures = ireval.measure(ireval.run_systems(collection, load_retrieval_config()), collection.qrels)
    assert measures["bm25"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}


def test_cli_warns_about_skipped_documents_and_reports_them(trams: Path, capsys) -> None:
    assert main(["eval", "--beir", str(trams), "--json"]) == 0
    out, err = capsys.readouterr()
    assert "skipped 2 document(s) with neither title nor text (line 2, 4)" in err
    assert "corpus.jsonl" in err
    document = json.loads(out)
    assert document["skipped_documents"] == 2 and document["queries"] == 2
    assert document["systems"]["bm25"]["mrr@10"] == 1.0


def test_a_collection_of_only_empty_documents_is_refused(tmp_path: Path, capsys) -> None:
    folder = write_collection(tmp_path / "blank", [TRAM_DOCS[1], TRAM_DOCS[3]], TRAM_QUERIES, TRAM_QRELS)
    with pytest.raises(ConfigError, match="all 2 documents have neither title nor text"):
        ireval.load_beir(folder)
    assert main(["eval", "--beir", str(folder)]) == 2
    assert "corpus.jsonl" in capsys.readouterr().err


def test_other_bad_documents_are_withdrawn_and_counted_with_file_and_line(tmp_path: Path, capsys) -> None:
    """Issue 35: one withdrawn document does not abort the collection; it is counted and named."""
    folder = write_collection(
        tmp_path / "bad", [TRAM_DOCS[0], {"title": "no id"}, TRAM_DOCS[1]], TRAM_QUERIES, TRAM_QRELS
    )
    assert main(["eval", "--beir", str(folder), "--json"]) == 0
    out, err = capsys.readouterr()
    assert "corpus.jsonl:2" in err and "withdrew 1 document(s)" in err
    assert json.loads(out)["withdrawn_documents"] == 1


# Arguments about harbour ferries, ArguAna-style: every query is also a document (same id, same
# text), and what it is judged against is its counter-argument. A query's own document matches it
# word for word, so it ranks first unless it is excluded.
ARGUMENTS = {
    "a1": "Harbour ferries should run all night because shift workers cross the harbour after midnight.",
    "c1": "Night ferries carry few shift workers after midnight, so a night bus across the harbour bridge costs less.",
    "a2": "Ferry fares should be free for pupils since pupils cross the harbour to reach school.",
    "c2": "Free fares for pupils mean fewer ferry crossings can be paid for, and school buses already reach it.",
    "x1": "The lighthouse keeper logs the tide tables every morning.",
}
ARGUMENT_QRELS = {"a1": {"c1": 1}, "a2": {"c2": 1}}


@pytest.fixture
def arguments(tmp_path: Path) -> Path:
    docs = [{"_id": i, "title": "", "text": t} for i, t in ARGUMENTS.items()]
    queries = {q: ARGUMENTS[q] for q in ARGUMENT_QRELS}
    return write_collection(tmp_path / "ferries", docs, queries, ARGUMENT_QRELS)


def test_a_query_does_not_find_itself_when_ids_overlap(arguments: Path) -> None:
    collection = ireval.load_beir(arguments)
    config = load_retrieval_config()
    assert collection.self_ids() == {"a1", "a2"}
    kept = ireval.run_systems(collection, config, exclude_self=False)
    assert all(next(iter(kept[s][q])) == q for s in ("bm25", "fusion:weighted") for q in ("a1", "a2"))
    dropped = ireval.run_systems(collection, config)  # the default: on, since the ids overlap
    assert all(q not in dropped[s][q] for s in dropped for q in ("a1", "a2"))
    assert ireval.measure(kept, collection.qrels)["bm25"]["mrr@10"] == 0.5
    assert ireval.measure(dropped, collection.qrels)["bm25"]["mrr@10"] == 1.0


def test_cli_excludes_self_by_default_and_can_be_told_not_to(arguments: Path, capsys) -> None:
    assert main(["eval", "--beir", str(arguments), "--json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert default["exclude_self"] is True and default["systems"]["bm25"]["mrr@10"] == 1.0
    assert main(["eval", "--beir", str(arguments), "--json", "--no-exclude-self"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert kept["exclude_self"] is False and kept["systems"]["bm25"]["mrr@10"] == 0.5
    assert main(["eval", "--beir", str(arguments)]) == 0
    assert "each query's own document excluded" in capsys.readouterr().out


def test_without_overlapping_ids_nothing_is_excluded(trams: Path, capsys) -> None:
    collection = ireval.load_beir(trams)
    assert collection.self_ids() == set() and not ireval.excludes_self(collection, None)
    assert main(["eval", "--beir", str(trams), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["exclude_self"] is False


def test_exclude_self_needs_beir(capsys) -> None:
    assert main(["eval", "--sample", "--exclude-self"]) == 2
    assert "--exclude-self needs --beir" in capsys.readouterr().err


def test_a_restricted_document_changes_no_count_nor_exclude_self(tmp_path: Path, capsys) -> None:
    """Issue 35, case 9: a restricted document whose id is a query id, and a broken restricted
    line, change nothing in the public caller's report (exclude_self was computed over every id)."""
    plain = write_collection(tmp_path / "plain", TRAM_DOCS, TRAM_QUERIES, TRAM_QRELS)
    secret = [
        *TRAM_DOCS,
        {"_id": "q1", "title": "Depot", "text": "The depot code is 4471.", "acl": ["staff"]},
        {"_id": "e1", "title": "", "text": "", "acl": ["staff"]},
    ]
    hidden = write_collection(tmp_path / "hidden", secret, TRAM_QUERIES, TRAM_QRELS)
    with (hidden / "corpus.jsonl").open("a") as corpus:
        corpus.write('{"_id": "s9", "title": "Vault", "text": "x", "acl": ["staff"]\n')
    reports = []
    for folder in (plain, hidden):
        assert main(["eval", "--beir", str(folder), "--json"]) == 0
        out, err = capsys.readouterr()
        warnings = [line.replace(str(folder), "") for line in err.splitlines() if "queries" not in line]
        reports.append((json.loads(out), warnings))
    assert reports[0][0] | {"collection": ""} == reports[1][0] | {"collection": ""}
    assert reports[0][1] == reports[1][1]
    assert reports[1][0]["exclude_self"] is False and reports[1][0]["withdrawn_documents"] == 0


def test_a_repeated_document_id_is_reported_counted_and_the_first_scored(tmp_path: Path, capsys) -> None:
    # Every line twice: before, each id served neither document and every measure fell to 0.
    docs = [doc for doc in TRAM_DOCS for _ in range(2)]
    folder = write_collection(tmp_path / "twice", docs, TRAM_QUERIES, TRAM_QRELS)
    collection = ireval.load_beir(folder)
    assert sorted(u.id for u in collection.kb.units) == ["t1", "t3", "t5"]
    assert [(d.code, d.line) for d in collection.duplicates] == [
        (Code.DUPLICATE_UNIT_ID, 2),
        (Code.DUPLICATE_UNIT_ID, 6),
        (Code.DUPLICATE_UNIT_ID, 10),
    ]
    measures = ireval.measure(ireval.run_systems(collection, load_retrieval_config()), collection.qrels)
    assert measures["bm25"] == {"ndcg@10": 1.0, "recall@100": 1.0, "mrr@10": 1.0}
    assert main(["eval", "--beir", str(folder), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["duplicate_documents"] == 3
    assert "skipped 3 document(s) repeating an earlier document's id (DUPLICATE_UNIT_ID) (line 2, 6, 10)" in err
