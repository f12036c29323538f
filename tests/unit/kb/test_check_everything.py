"""`mrptui check` validates everything it is given: config files through their models with
file:line:col, whole-KB warnings, rules against the KB's relations, "did you mean" hints and
labelled ids that no longer exist (`--against`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mrptui.cli import main

# A bakery KB of our own, unlike the sample KB.
OVEN = """## Context Unit bakery::chunk-000::unit-000
Role: Explanation
Topic: Oven and crust
Claim: The stone oven causes a crisp crust.
Subject: stone oven
Relation: causes
Object: crisp crust
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_path: Path) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kb").mkdir()
    (tmp_path / "kb" / "bakery.md").write_text(OVEN, encoding="utf-8")
    shutil.copytree(config_path, tmp_path / "config")
    return tmp_path


def _check(capsys, *argv: str) -> tuple[int, list[str]]:
    code = main(["check", *argv])
    return code, capsys.readouterr().out.splitlines()


def test_a_retrieval_config_that_ask_rejects_fails_check_with_position_and_hint(workdir: Path, capsys) -> None:
    path = workdir / "config" / "retrieval.json"
    data = json.loads(path.read_text())
    data["profiles"]["kb-fast"]["maxResult"] = data["profiles"]["kb-fast"].pop("maxResults")
    path.write_text(json.dumps(data, indent=2))
    code, lines = _check(capsys, "config")
    assert code == 1
    line_no = next(i for i, text in enumerate(path.read_text().splitlines(), 1) if '"maxResult"' in text)
    hint = [line for line in lines if "maxResult:" in line]
    assert hint == [
        f"config/retrieval.json:{line_no}:7: INVALID_CONFIG profiles.kb-fast.maxResult: Extra inputs are not "
        "permitted; did you mean 'maxResults'?"
    ]
    assert any("profiles.kb-fast.maxResults: Field required" in line for line in lines)
    assert main(["ask", "What bakes the crust?", "--kb", "kb", "--config", "config"]) == 2


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("engine.json", '{"plugins": [], "planners": {}, "budgets": {"maxReplan": 1}}', "did you mean 'maxReplans'?"),
        ("llm.json", '{"endpoint": 5}', "INVALID_CONFIG"),
        ("keymap.json", '{"app.quitt": "ctrl+x"}', "unknown binding id 'app.quitt'"),
    ],
)
def test_every_config_file_is_validated(workdir: Path, capsys, name: str, content: str, expected: str) -> None:
    (workdir / "config" / name).write_text(content)
    code, lines = _check(capsys, "config")
    assert code == 1 or name == "keymap.json"
    assert any(line.startswith(f"config/{name}:1:") and expected in line for line in lines), lines


def test_empty_kb_and_skipped_files_are_warned_with_the_extensions_read(workdir: Path, capsys) -> None:
    (workdir / "empty").mkdir()
    (workdir / "empty" / "notes.markdown").write_text("# Not read\n")
    (workdir / "empty" / "more.text").write_text("Also not read.\n")
    code, lines = _check(capsys, "empty")
    assert code == 0
    read = ".md, .cnl, .txt, .nl"
    assert f"empty/more.text:1:1: warning: SKIPPED_FILE skipped: .text files are not read (read: {read})" in lines
    assert (
        f"empty/notes.markdown:1:1: warning: SKIPPED_FILE skipped: .markdown files are not read (read: {read})" in lines
    )
    assert f"empty:1:1: warning: EMPTY_KB the KB has no units (files read: {read})" in lines


def test_an_empty_kb_whose_files_were_read_says_the_errors_left_no_unit(workdir: Path, capsys) -> None:
    # Listing the extensions read sent the author looking for a file the scan missed, when the
    # file was read and every unit of it had an error.
    (workdir / "broken").mkdir()
    (workdir / "broken" / "bakery.md").write_text(OVEN.replace("Role: Explanation", "Role: Explenation"))
    (workdir / "docs.jsonl").write_text('{"_id": "d1", "title": "Rye", "txet": "Rye bread is sour."}\n')
    (workdir / "blank").mkdir()
    (workdir / "blank" / "notes.md").write_text("")
    _, lines = _check(capsys, "broken")
    assert "broken:1:1: warning: EMPTY_KB the KB has no units: the errors above left none of the 1 file read" in lines
    _, lines = _check(capsys, "docs.jsonl")
    assert (
        "docs.jsonl:1:1: warning: EMPTY_KB the KB has no units: the errors above left none of the 1 file read" in lines
    )
    _, lines = _check(capsys, "blank")
    assert "blank:1:1: warning: EMPTY_KB the KB has no units: the 1 file read holds none" in lines


def test_a_unit_made_only_of_stopwords_is_unreachable(workdir: Path, capsys) -> None:
    (workdir / "kb" / "odd.md").write_text(
        "## Context Unit odd::chunk-000::unit-000\nRole: Narrative\nTopic: It is\nClaim: And so it was.\n"
    )
    _, lines = _check(capsys, "kb")
    assert (
        "kb/odd.md:1:1: warning: UNREACHABLE_UNIT unit odd::chunk-000::unit-000 has no searchable word after "
        "stopwords: no question can reach it" in lines
    )


def test_a_unit_past_hdcs_token_cap_is_a_warning_naming_its_size(workdir: Path, capsys) -> None:
    # A paste that lost its line breaks reads as one sentence, so one unit, quoted whole in answers.
    words = " ".join(f"gauge{i}" for i in range(5_001))
    (workdir / "kb" / "log.txt").write_text(f"Gauge log {words}.\n")
    _, lines = _check(capsys, "kb")
    [long] = [line for line in lines if "LONG_UNIT" in line]
    assert long.startswith("kb/log.txt:1:1: warning: LONG_UNIT unit log::chunk-")
    assert re.search(r" has 5,0\d\d tokens: HDC encodes its first 5,000 only, ", long)
    (workdir / "kb" / "log.txt").write_text(f"Gauge log {' '.join(words.split()[:4_900])}.\n")
    _, lines = _check(capsys, "kb")
    assert not [line for line in lines if "LONG_UNIT" in line]


def test_a_rule_reading_a_relation_no_unit_states_is_a_warning(workdir: Path, capsys) -> None:
    rules = {
        "rules": [
            {
                "id": "oven_use",
                "when": [{"s": "?a", "r": "uses", "o": "?b"}, {"s": "?b", "r": "causes", "o": "?c"}],
                "then": {"s": "?a", "r": "causes", "o": "?c"},
                "weight": 0.8,
            }
        ]
    }
    (workdir / "config" / "thinkingdb.json").write_text(json.dumps(rules, indent=2))
    code, lines = _check(capsys, "kb", "config")
    assert code == 0
    assert (
        "config/thinkingdb.json:3:1: warning: RULE_RELATION_NOT_IN_KB rule oven_use reads relation 'uses', "
        "which no unit states and no rule concludes" in lines
    )


@pytest.mark.parametrize(
    ("written", "typo", "hint"),
    [
        ("Role: Explanation", "Role: Explantion", "did you mean 'Explanation'?"),
        ("Relation: causes", "Relation: cuases", "did you mean 'causes'?"),
        ("Role: Explanation", "Role: Explanation\nUtilityActs: defnie", "did you mean 'define'?"),
        ("Topic: Oven and crust", "Topik: Oven and crust", "did you mean 'Topic'?"),
    ],
)
def test_unit_typos_get_a_did_you_mean(workdir: Path, capsys, written: str, typo: str, hint: str) -> None:
    (workdir / "kb" / "bakery.md").write_text(OVEN.replace(written, typo))
    code, lines = _check(capsys, "kb")
    assert code == 1
    assert any(hint in line for line in lines), lines


def test_against_reports_labelled_ids_that_no_longer_exist(workdir: Path, capsys) -> None:
    queries = workdir / "queries.json"
    queries.write_text(
        json.dumps(
            [
                {
                    "id": "b1",
                    "question": "What makes the crust crisp?",
                    "expect_evidence": ["bakery::chunk-000::unit-000"],
                    "must_not_appear": [],
                },
                {
                    "id": "b2",
                    "question": "What proofs the dough?",
                    "expect_evidence": ["bakery::chunk-009::unit-000"],
                    "must_not_appear": ["gone::chunk-000::unit-000"],
                },
            ],
            indent=2,
        )
    )
    code, lines = _check(capsys, "kb", "--against", str(queries))
    assert code == 1
    problems = [line for line in lines if "UNKNOWN_LABELLED_ID" in line]
    text = queries.read_text().splitlines()
    stale = next(i for i, line in enumerate(text, 1) if "chunk-009" in line)
    gone = next(i for i, line in enumerate(text, 1) if "gone::" in line)
    assert problems == [
        f"queries.json:{stale}:7: UNKNOWN_LABELLED_ID query b2: expect_evidence names 'bakery::chunk-009::unit-000', "
        "which is not a unit of the KB; did you mean 'bakery::chunk-000::unit-000'?",
        f"queries.json:{gone}:7: UNKNOWN_LABELLED_ID query b2: must_not_appear names 'gone::chunk-000::unit-000', "
        "which is not a unit of the KB; did you mean 'bakery::chunk-000::unit-000'?",
    ]


def test_against_suggests_for_the_first_fifty_unknown_ids_and_says_where_it_stopped(workdir: Path, capsys) -> None:
    queries = workdir / "queries.json"
    stale = [f"bakery::chunk-000::unit-{n:03d}x" for n in range(51)]
    row = {"id": "b1", "question": "What makes the crust crisp?", "expect_evidence": stale, "must_not_appear": []}
    queries.write_text(json.dumps([row], indent=2))
    code, lines = _check(capsys, "--against", str(queries), "kb")
    assert code == 1
    problems = [line for line in lines if "UNKNOWN_LABELLED_ID" in line]
    assert len(problems) == 51
    assert all(line.endswith("did you mean 'bakery::chunk-000::unit-000'?") for line in problems[:50])
    assert problems[50].endswith("which is not a unit of the KB; no suggestion past the first 50 unknown ids")


def test_the_summary_counts_one_of_anything_in_the_singular(workdir: Path, capsys) -> None:
    path = workdir / "config" / "retrieval.json"
    data = json.loads(path.read_text())
    data["profiles"]["kb-fast"]["extra"] = 1  # one problem in one config file
    path.write_text(json.dumps(data, indent=2))
    _, lines = _check(capsys, "kb", "config")
    assert "config/retrieval.json: retrieval config, 1 problem" in lines or any(
        line.startswith("config/retrieval.json: ") and line.endswith(", 1 problem") for line in lines
    ), lines
    assert "kb/bakery.md: 1 unit" in lines
    assert not any(
        " 1 problems" in line or " 1 units" in line or " 1 errors" in line or " 1 files" in line for line in lines
    ), lines
