"""Inputs under their caps stay bounded (issue 36): nested JSON is refused at its line, never a
RecursionError; bytes that are not UTF-8 are exit 2 with file and line; a JSON Lines file is read
a piece at a time and cached like any KB file; one document over its cap is refused at its line;
a queries file's problems are located in one pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cnl import caps as caps_module
from core.cnl import read_file
from core.cnl.caps import InputCaps
from core.cnl.source import read_pieces
from core.eval.queries import load_queries
from core.infra.config import ConfigError, read_json
from core.infra.diagnostics import Code
from core.infra.json_limits import MAX_JSON_DEPTH, NotUtf8, TooDeep, check_depth, decode_utf8
from core.infra.json_locate import Locator
from core.store import SegmentStore
from core.store.segment import Segment
from mrptui.cli import main

DEEP = "[" * 200_000
DOC = {"_id": "tram-1", "title": "Tram depot", "text": "Trams are washed overnight at the northern depot."}


def beir(folder: Path, corpus: str, queries: bytes | None = None, qrels: bytes | None = None) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (folder / "queries.jsonl").write_bytes(queries or b'{"_id": "q1", "text": "where are trams washed"}\n')
    (folder / "qrels" / "test.tsv").write_bytes(qrels or b"query-id\tcorpus-id\tscore\nq1\ttram-1\t1\n")
    return folder


def test_depth_counts_brackets_outside_strings_and_names_the_column() -> None:
    check_depth("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    check_depth(json.dumps({"text": "[" * 5_000}))
    with pytest.raises(TooDeep) as raised:
        check_depth('{"a": "[[[", "b": ' + "[" * (MAX_JSON_DEPTH + 5))
    assert raised.value.col == len('{"a": "[[[", "b": ') + MAX_JSON_DEPTH


@pytest.mark.parametrize(
    ("text", "line", "col"),
    [
        # The same key in sibling objects is no repeat; the second "caller" in one object is.
        (
            '[\n  {"id": "q1", "caller": {"tags": ["a"]}},\n  {"id": "q2", "caller": {"tags": []},\n   "caller": {}}\n]',
            4,
            4,
        ),
        # Inside a nested object, written with an escape: json reads "\u0069d" as "id".
        ('{"limits": {"maxDepth": 4,\n "maxDepth": 30}, "rules": [{"id": "a", "\\u0069d": "b"}]}', 2, 2),
        ('{"rules": [{"id": "a", "when": [], "weight": 1,\n  "when": [{"s": ":", "r": "{", "o": "["}]}]}', 2, 3),
        # The outer object's repeat comes first in the text, the inner one is parsed first.
        ('{"a": 1, "a": 2, "b": {"c": 1,\n "c": 2}}', 2, 2),
    ],
)
def test_a_key_written_twice_in_a_json_file_is_a_config_error_at_the_second(tmp_path: Path, text, line, col) -> None:
    path = tmp_path / "queries.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        read_json(path)
    assert [(d.code, d.line, d.col) for d in raised.value.diagnostics] == [(Code.INVALID_JSON, line, col)]
    assert "written twice" in raised.value.diagnostics[0].message


def test_a_number_past_the_digit_limit_is_located_in_a_json_file_and_a_kb_line(tmp_path: Path) -> None:
    path = tmp_path / "engine.json"
    path.write_text(
        '{"note": "' + "9" * 5_000 + '",\n "budgets": {"maxReplans": ' + "9" * 5_000 + "}}", encoding="utf-8"
    )
    with pytest.raises(ConfigError) as raised:
        read_json(path)
    (problem,) = raised.value.diagnostics
    assert (problem.code, problem.line, problem.col) == (Code.INVALID_JSON, 2, 28)
    assert problem.message == "a number of 5,000 digits; at most 4,300 are read"
    kb = tmp_path / "kb.jsonl"
    kb.write_text(json.dumps(DOC) + '\n{"_id": "x", "text": "y", "metadata": ' + "7" * 5_000 + "}\n", encoding="utf-8")
    units, problems = read_file(kb)
    assert [u.id for u in units] == ["tram-1"]
    assert [(d.code, d.line, d.col, d.message) for d in problems] == [
        (Code.MALFORMED_LINE, 2, 39, "a number of 5,000 digits; at most 4,300 are read")
    ]


def test_a_deeply_nested_kb_line_is_malformed_at_its_line_and_the_others_load(tmp_path: Path) -> None:
    kb = tmp_path / "kb.jsonl"
    kb.write_text(json.dumps(DOC) + "\n" + DEEP + "\n", encoding="utf-8")
    units, problems = read_file(kb)
    assert [u.id for u in units] == ["tram-1"]
    assert [(d.code, d.file, d.line) for d in problems] == [(Code.MALFORMED_LINE, str(kb), 2)]
    assert "nested deeper than" in problems[0].message


def test_a_deeply_nested_corpus_line_is_withdrawn_at_its_line_and_the_rest_scored(tmp_path: Path, capsys) -> None:
    folder = beir(tmp_path / "c", json.dumps(DOC) + "\n" + DEEP + "\n")
    assert main(["eval", "--beir", str(folder), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["withdrawn_documents"] == 1
    assert f"{folder / 'corpus.jsonl'}:2: JSON nested deeper than" in err and "RecursionError" not in err
    only = beir(tmp_path / "d", DEEP + "\n")
    assert main(["eval", "--beir", str(only)]) == 2
    err = capsys.readouterr().err
    assert f"{only / 'corpus.jsonl'}:1:" in err and "MALFORMED_LINE" in err


@pytest.mark.parametrize("score", ["\u00b2", "9" * 5_000], ids=["superscript", "long"])
def test_a_qrels_score_int_cannot_read_is_a_malformed_line_not_an_internal_error(
    tmp_path: Path, capsys, score: str
) -> None:
    qrels = f"query-id\tcorpus-id\tscore\nq1\ttram-1\t{score}\n".encode()
    folder = beir(tmp_path / "c", json.dumps(DOC) + "\n", qrels=qrels)
    assert main(["eval", "--beir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{folder / 'qrels' / 'test.tsv'}:2:1: MALFORMED_LINE expected 'query-id corpus-id score'" in err
    assert "internal error" not in err


@pytest.mark.parametrize("name", ["queries.jsonl", "qrels"])
def test_beir_files_that_are_not_utf8_are_exit_2_with_file_and_line(tmp_path: Path, capsys, name: str) -> None:
    garbage = b'{"_id": "q1", "text": "fine"}\n\xff\xfe\x80 random bytes\n'
    folder = beir(
        tmp_path / "c",
        json.dumps(DOC) + "\n",
        **({"queries": garbage} if name == "queries.jsonl" else {"qrels": garbage}),
    )
    assert main(["eval", "--beir", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "INVALID_ENCODING" in err and ":2:1:" in err and "UnicodeDecodeError" not in err


def test_a_json_file_too_deep_or_not_utf8_is_a_config_error_at_its_line(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text('{"a":\n' + DEEP, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        read_json(deep)
    assert [(d.code, d.line) for d in raised.value.diagnostics] == [(Code.INVALID_JSON, 2)]
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'[\n  {"id": "q1"},\n  "\xc3\x28"\n]\n')
    with pytest.raises(ConfigError) as raised:
        read_json(bad)
    assert [(d.code, d.line, d.col) for d in raised.value.diagnostics] == [(Code.INVALID_ENCODING, 3, 4)]
    with pytest.raises(NotUtf8):
        decode_utf8(b"ok\n\xff")


def test_one_document_over_its_cap_is_refused_at_its_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("core.cnl.jsonl.CAPS", InputCaps(max_jsonl_line_chars=200))
    kb = tmp_path / "kb.jsonl"
    big = {"_id": "big", "title": "Long", "text": "word " * 100}
    kb.write_text("\n".join(json.dumps(d) for d in (DOC, big, {**DOC, "_id": "tram-2"})) + "\n", encoding="utf-8")
    units, problems = read_file(kb)
    assert [u.id for u in units] == ["tram-1", "tram-2"]
    assert [(d.code, d.line) for d in problems] == [(Code.FILE_TOO_LARGE, 2)]


def _jsonl(count: int) -> str:
    lines = []
    for i in range(count):
        doc = {"_id": f"d{i}", "title": f"Stop {i}", "text": f"Tram stop {i} serves line {i % 7}."}
        if i % 4 == 0:
            doc["acl"] = ["staff"]
        lines.append(json.dumps(doc) if i != 137 else "{not json")
    return "\n".join(lines) + "\n"


def test_a_jsonl_file_built_in_pieces_is_the_segment_built_whole(tmp_path: Path, monkeypatch) -> None:
    kb = tmp_path / "kb.jsonl"
    kb.write_text(_jsonl(260), encoding="utf-8")
    whole = Segment.build(kb, "k")
    monkeypatch.setattr(caps_module, "CAPS", InputCaps(piece_units=100))
    monkeypatch.setattr("core.cnl.source.CAPS", caps_module.CAPS)
    monkeypatch.setattr("core.store.segment.CAPS", caps_module.CAPS)
    pieces = Segment.build(kb, "k")
    assert type(whole.units).__name__ == "tuple" and type(pieces.units).__name__ == "StoredUnits"
    assert list(pieces.units) == list(whole.units)
    assert pieces.unit_json == whole.unit_json and (pieces.offsets == whole.offsets).all()
    assert (
        pieces.words == whole.words and (pieces.terms == whole.terms).all() and (pieces.lengths == whole.lengths).all()
    )
    assert pieces.columns.ids == whole.columns.ids and pieces.columns.perms == whole.columns.perms
    assert (pieces.columns.cols == whole.columns.cols).all() and (pieces.digests == whole.digests).all()
    assert [(d.code, d.line) for d in pieces.diagnostics] == [(d.code, d.line) for d in whole.diagnostics]
    assert [(d.code, d.line) for d in whole.diagnostics] == [(Code.MALFORMED_LINE, 138)]


def test_a_jsonl_kb_larger_than_a_text_file_may_be_is_cached(tmp_path: Path, monkeypatch) -> None:
    # JSON Lines files used to be cached only under the text files' cap: above it, every ask read them.
    monkeypatch.setattr("core.cnl.source.MAX_FILE_BYTES", 1_000)
    monkeypatch.setattr("core.store.store.MAX_FILE_BYTES", 1_000, raising=False)  # where the store kept its own
    kb = tmp_path / "kb.jsonl"
    kb.write_text(_jsonl(40), encoding="utf-8")
    assert kb.stat().st_size > 1_000
    SegmentStore(tmp_path / "cache").segment(kb)
    store = SegmentStore(tmp_path / "cache")
    assert len(store.segment(kb).units) == 40
    assert (store.builds, store.loads) == (0, 1)


def test_many_bad_queries_are_each_located_at_their_own_line(tmp_path: Path) -> None:
    entries = [{"id": f"q{i}", "question": "where are trams washed"} for i in range(3_000)]
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(entries, indent=2), encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_queries(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    problems = raised.value.diagnostics
    assert len(problems) == 2 * len(entries)
    for problem in problems[::97]:
        index = int(problem.message.split("]")[0].lstrip("["))
        assert lines[problem.line - 1].strip() == "{" and f'"q{index}"' in lines[problem.line]


def test_the_locator_finds_nested_members_and_stops_at_a_missing_one() -> None:
    text = json.dumps({"a": [1, {"b": [2, 3]}], "c": {"d": "e"}}, indent=1)
    lines = text.split("\n")

    def line_of(written: str) -> int:
        return next(number for number, line in enumerate(lines, start=1) if line.strip().startswith(written))

    locator = Locator(text)
    assert locator.position(()) == (1, 1)
    assert locator.position(("a", 1, "b", 1))[0] == line_of("3")
    assert locator.position(("c", "d")) == (line_of('"d"'), lines[line_of('"d"') - 1].index('"d"') + 1)
    assert locator.position(("c", "missing")) == locator.position(("c",)) == (line_of('"c"'), 2)
    assert locator.position(("zz",)) == (1, 1)


def test_a_squad_questions_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    from core.eval.squad import load_squad

    folder = tmp_path / "squad"
    (folder / "articles").mkdir(parents=True)
    (folder / "questions.jsonl").write_bytes(b'{"id": "a"}\n{"id": "b\xe9"}\n')
    with pytest.raises(ConfigError) as raised:
        load_squad(folder)
    assert [(d.code, d.line, d.col) for d in raised.value.diagnostics] == [(Code.INVALID_ENCODING, 2, 10)]


def test_a_jsonl_file_stops_at_its_line_cap_with_an_error_there(tmp_path: Path, monkeypatch) -> None:
    capped = InputCaps(max_jsonl_lines=150, piece_units=100)
    for module in ("core.cnl.jsonl", "core.cnl.source", "core.store.segment"):
        monkeypatch.setattr(f"{module}.CAPS", capped)
    kb = tmp_path / "kb.jsonl"
    kb.write_text(
        _jsonl(260).replace("{not json", json.dumps({"_id": "d137", "title": "t", "text": "x"})), encoding="utf-8"
    )
    for read in (read_file(kb), Segment.build(kb, "k")):
        units, problems = (read.units, read.diagnostics)
        assert [u.id for u in units] == [f"d{i}" for i in range(150)]
        assert [(d.code, d.line) for d in problems] == [(Code.FILE_TOO_LARGE, 151)]


def test_the_line_cap_is_reported_once_at_the_first_line_past_it_that_holds_a_document(
    tmp_path: Path, monkeypatch
) -> None:
    capped = InputCaps(max_jsonl_lines=200, piece_units=100)  # the cap falls on a piece's end
    for module in ("core.cnl.jsonl", "core.cnl.source", "core.store.segment"):
        monkeypatch.setattr(f"{module}.CAPS", capped)
    kb = tmp_path / "kb.jsonl"
    lines = _jsonl(200).replace("{not json", json.dumps({"_id": "d137", "title": "t", "text": "x"}))
    kb.write_text(lines + "\n\n" + json.dumps(DOC) + "\n", encoding="utf-8")
    for read in (read_file(kb), Segment.build(kb, "k")):
        assert len(read.units) == 200
        assert [(d.code, d.line) for d in read.diagnostics] == [(Code.FILE_TOO_LARGE, 203)]
    kb.write_text(lines + "\n\n", encoding="utf-8")
    assert Segment.build(kb, "k").diagnostics == ()


def _unit(uid: str, body: str) -> str:
    return f"## Context Unit {uid}\nRole: Definition\nTopic: Trams\nClaim: Trams run late.\n{body}"


def test_a_units_problems_past_the_cap_are_counted_not_listed_and_a_permission_line_still_is(tmp_path: Path) -> None:
    cap = InputCaps().max_problems
    kb = tmp_path / "kb.md"
    fields = "".join(f"Colour{i % 10}: red\n" for i in range(5_000))
    kb.write_text(
        "## Context Unit t::chunk-000::unit-000\nRole: Definition\n" + fields + "Acls: staff\n", encoding="utf-8"
    )
    units, problems = read_file(kb)
    assert units == [] and len(problems) <= cap
    assert [d.line for d in problems if d.code is Code.UNKNOWN_FIELD][:3] == [3, 4, 5]  # the first, at their lines
    summary = next(d for d in problems if d.code is Code.TOO_MANY_PROBLEMS)
    assert summary.is_error and "inputs.maxProblems is 1,000" in summary.message
    listed = sum(d.code is Code.UNKNOWN_FIELD for d in problems)
    assert f"{5_000 - listed:,} more problem(s) of this unit" in summary.message
    # What building the unit finds is listed still: it says more than the thousandth unknown field.
    assert {d.message for d in problems if d.code is Code.MISSING_REQUIRED_FIELD} >= {"Topic is required"}
    assert [d.line for d in problems if d.code is Code.PERMISSION_NOT_READ] == [5_003]
    assert all(d.author_only for d in problems)  # the look-alike makes every problem the author's


def test_a_files_problems_past_the_cap_are_counted_apart_for_the_public_and_the_author(tmp_path: Path) -> None:
    """A restricted unit's problems never push a public problem out of the list (or into it)."""
    public = "".join(_unit(f"p::chunk-000::unit-{i:03d}", "Colour: red\n") for i in range(1_500))
    restricted = _unit("r::chunk-000::unit-000", "Acl: staff\n" + "Colour: red\n" * 1_200)
    plain, mixed = tmp_path / "plain.md", tmp_path / "mixed.md"
    plain.write_text(public, encoding="utf-8")
    mixed.write_text(restricted + public, encoding="utf-8")
    shift = restricted.count("\n")
    _, plain_problems = read_file(plain)
    _, mixed_problems = read_file(mixed)

    def shown(problems, lines: int = 0):
        return [(d.code, d.line - lines, d.message) for d in problems if not d.author_only]

    assert shown(mixed_problems, shift) == shown(plain_problems)
    assert len(shown(plain_problems)) == 1_001 and plain_problems[-1].code is Code.TOO_MANY_PROBLEMS
    assert "500 more problem(s) in this file" in plain_problems[-1].message
    assert 0 < sum(d.author_only for d in mixed_problems) <= 1_000  # the restricted unit's, within its cap


def test_a_jsonl_files_problems_are_capped_across_its_pieces(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr("core.cnl.source.CAPS", InputCaps(piece_units=100))
    kb = tmp_path / "kb.jsonl"
    kb.write_text("".join(f'{{"_id": "d{i}", "title": ""}}\n' for i in range(2_500)), encoding="utf-8")
    problems = [d for result in read_pieces(kb) for d in result.diagnostics]
    assert len(problems) == 1_001 and [d.line for d in problems[:3]] == [1, 2, 3]
    assert problems[-1].code is Code.TOO_MANY_PROBLEMS and problems[-1].line == 1_001
    assert "1,500 more problem(s) in this file" in problems[-1].message


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32"])
def test_a_file_saved_as_utf16_or_utf32_is_named_so_not_called_binary(tmp_path: Path, encoding: str) -> None:
    name = "UTF-32" if "32" in encoding else "UTF-16"
    bom = {"utf-16-be": "\ufeff"}.get(encoding, "")  # the plain codecs write their own mark
    for suffix in (".md", ".cnl", ".txt", ".jsonl"):
        kb = tmp_path / f"kb{suffix}"
        kb.write_bytes((bom + "Trams run late.\n").encode(encoding))
        units, problems = read_file(kb)
        assert units == [] and [(d.code, d.line) for d in problems] == [(Code.INVALID_ENCODING, 1)]
        assert problems[0].message.startswith(f"the file is {name} text") and "save it as UTF-8" in problems[0].message
    config = tmp_path / "retrieval.json"
    config.write_bytes((bom + '{"profiles": {}}').encode(encoding))
    with pytest.raises(ConfigError, match=f"the file is {name} text"):
        read_json(config)


def test_a_json_file_that_is_missing_says_so_in_plain_words(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        read_json(tmp_path / "queries.json")
    assert [(d.code, d.message) for d in raised.value.diagnostics] == [
        (Code.FILE_UNREADABLE, "No such file or directory")
    ]
