"""`mrptui retrieve` and `mrptui ask` as a script would use them: JSON contract, exit codes, safety."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from core.answer.whynot import NOT_VISIBLE
from mrptui.cli import main

VIP = "merchant-vip-terms::chunk-000::unit-000"
RPL14 = "eu-electronics::chunk-000::unit-000"
RPL14_OLD = "eu-electronics::chunk-001::unit-002"
SAMPLE_KB = Path(__file__).resolve().parents[2] / "sample_kb"
EU_AGENT = ["--caller-tags", "support:eu", "--region", "EU", "--as-of", "2026-05-27"]


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_retrieve_json_has_the_contract_keys(capsys) -> None:
    code, out, _ = _cli(capsys, "retrieve", "What is Helix?", "--kb-plugin", "kb-fast", "--json")
    data = json.loads(out)
    assert code == 0
    assert set(data) >= {"plugin", "status", "sufficient", "escalated", "lanes", "candidates", "evidence"}
    assert data["plugin"] == "kb-fast" and data["lanes"] == ["bm25"]
    first = data["candidates"][0]
    assert set(first) >= {"id", "bm25", "hdc", "tdb", "fused", "score", "kept", "cut_reason"}
    assert first["hdc"] is None and first["tdb"] is None
    assert data["evidence"] == [c["id"] for c in data["candidates"] if c["kept"]]
    assert len(data["evidence"]) <= 3


def test_retrieve_reports_each_cut_reason(capsys) -> None:
    _, out, _ = _cli(capsys, "retrieve", "What is Helix?", "--kb-plugin", "kb-fast", "--json")
    reasons = {c["cut_reason"] for c in json.loads(out)["candidates"] if not c["kept"]}
    assert reasons == {"max_results", "gap", "min_score"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["retrieve", "   "], "the question is empty"),
        (["retrieve", "x", "--kb-plugin", "kb-nope"], "unknown plugin id 'kb-nope'"),
        (["retrieve", "x", "--kb-plugin", "gs-symbolic"], "not a kb-plugin"),
        (["retrieve", "x", "--kb", "/no/such/folder"], "KB path not found: /no/such/folder"),
        (["retrieve", "x", "--as-of", "yesterday"], "--as-of must be a date"),
        (["ask", "x", "--caller-tags", "a b"], "--caller-tags/--region: caller tag 'a b' contains the separator"),
        (["ask", ""], "the question is empty"),
        (["ask", "x", "--gs", "gs-nope"], "unknown plugin id 'gs-nope'"),
        (["ask", "x", "--planner", "planner-nope"], "unknown planner 'planner-nope'"),
        (
            ["ask", "x", "--trace", "/no/such/dir/t.jsonl"],
            "--trace /no/such/dir/t.jsonl: folder /no/such/dir does not exist",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_two(capsys, argv, message) -> None:
    code, out, err = _cli(capsys, *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


def test_restricted_unit_is_invisible_even_when_its_code_is_asked(capsys) -> None:
    for plugin in ("kb-fast", "kb-balanced", "kb-thinkingdb"):
        _, out, _ = _cli(capsys, "retrieve", "VIP-RPL-1 immediate refund", "--kb-plugin", plugin, "--json", *EU_AGENT)
        assert "merchant-vip-terms" not in out
    _, out, _ = _cli(capsys, "ask", "What does VIP-RPL-1 say?", "--json", *EU_AGENT)
    assert "merchant-vip-terms" not in out
    assert "immediate refund" not in out.lower()


def test_superseded_revision_never_appears_but_the_current_one_does(capsys) -> None:
    _, out, _ = _cli(capsys, "retrieve", "RPL-14 refurbished laptop return", "--json", *EU_AGENT)
    data = json.loads(out)
    assert RPL14 in data["evidence"]
    assert RPL14_OLD not in out


def test_public_caller_does_not_see_acl_units(capsys) -> None:
    _, out, _ = _cli(capsys, "retrieve", "RPL-14", "--json")
    assert "eu-electronics" not in out


def test_why_not_says_the_same_for_restricted_and_unknown_ids(capsys, tmp_path) -> None:
    # The same id, restricted in the sample KB and absent from a copy without its file.
    without = shutil.copytree(SAMPLE_KB, tmp_path / "kb", ignore=shutil.ignore_patterns("merchant.cnl"))
    _, restricted, _ = _cli(capsys, "retrieve", "VIP-RPL-1", "--why-not", VIP, "--json", *EU_AGENT)
    _, unknown, _ = _cli(capsys, "retrieve", "VIP-RPL-1", "--why-not", VIP, "--json", "--kb", str(without), *EU_AGENT)
    assert json.loads(restricted)["reasons"] == json.loads(unknown)["reasons"]
    assert json.loads(restricted)["reasons"]["visibility"].startswith(NOT_VISIBLE)


def test_why_not_of_a_mistyped_id_says_the_id_meant(capsys) -> None:
    _, out, _ = _cli(capsys, "retrieve", "What is Helix?", "--why-not", "helix-storage::chunk-000::unit-02")
    assert "did you mean 'helix-storage::chunk-000::unit-002'?" in out


def test_why_not_never_suggests_a_unit_outside_the_callers_view(capsys) -> None:
    def visibility(*caller: str) -> str:
        _, out, _ = _cli(capsys, "retrieve", "VIP-RPL-1", "--why-not", VIP[:-1], "--json", *caller)
        return json.loads(out)["reasons"]["visibility"]

    assert "merchant-vip-terms" not in visibility(*EU_AGENT)
    assert "did you mean 'merchant-vip-terms::" in visibility("--caller-tags", "merchant:vip-ops", *EU_AGENT[2:])


def test_why_not_gives_every_lane_a_reason(capsys) -> None:
    _, out, _ = _cli(capsys, "retrieve", "What is Helix?", "--why-not", "helix-storage::chunk-000::unit-002", "--json")
    reasons = json.loads(out)["reasons"]
    assert set(reasons) >= {"visibility", "bm25", "hdc", "thinkingdb", "kb-fast", "kb-balanced", "kb-thinkingdb"}
    assert reasons["kb-fast"].startswith("cut by maxResults")


def test_a_config_folder_holding_no_config_file_is_a_warning_naming_what_it_holds(tmp_path, capsys) -> None:
    # The rules saved under another name: the bundled rules ran in their place with nothing said.
    (tmp_path / "thinkingDB.json").write_text('{"rules": []}')
    (tmp_path / "rules.json").write_text('{"rules": []}')
    code, _, err = _cli(capsys, "retrieve", "What is Helix?", "--kb-plugin", "kb-fast", "--config", str(tmp_path))
    assert code == 0
    assert err == (
        f"mrptui: warning: --config {tmp_path} holds none of engine.json, retrieval.json, thinkingdb.json, "
        "llm.json, embeddings.json, cluster.json, keymap.json: the bundled config runs, its rules included "
        "(a rules file is named thinkingdb.json); rules.json is not read; thinkingDB.json is not read; "
        "did you mean 'thinkingdb.json'?\n"
    )
    (tmp_path / "thinkingdb.json").write_text('{"rules": []}')
    _, _, err = _cli(capsys, "retrieve", "What is Helix?", "--kb-plugin", "kb-fast", "--config", str(tmp_path))
    assert err == ""
