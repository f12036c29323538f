"""Author-controlled synonyms (Solr format): parsing, expansion, scoring, explanations and `check`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.answer.whynot import why_not
from core.kernel.contract import PluginType, Request, RunContext
from core.kernel.session import Session
from core.text.synonyms import Synonyms, load, parse
from core.text.tokenizer import tokenize
from core.units import Act, Caller, Intent
from mrptui.cli import main

KB_TEXT = """## Context Unit garden::chunk-000::unit-000
Role: Procedure
Topic: Growing aubergines under glass
Procedure: Sow aubergine seeds in March at 21 degrees and pot them on at four leaves.

## Context Unit garden::chunk-000::unit-001
Role: Explanation
Topic: Courgette gluts
Claim: A single courgette plant gives several fruits a week in August.

## Context Unit garden::chunk-000::unit-002
Role: Explanation
Topic: Greenhouse shading
Claim: White shading paint keeps a greenhouse below thirty degrees in summer.
"""


@pytest.fixture
def garden(tmp_path: Path) -> Path:
    folder = tmp_path / "garden"
    folder.mkdir()
    (folder / "veg.md").write_text(KB_TEXT, encoding="utf-8")
    return folder


def test_parse_equivalences_mappings_comments_and_multi_word_terms() -> None:
    rules, problems = parse(
        "# comment\n\neggplant, aubergine  # trailing\nzucchini => courgette\nglass house => greenhouse\n", "s.txt"
    )
    assert not problems
    assert [(r.line, r.replace) for r in rules] == [(3, False), (4, True), (5, True)]
    expansion = Synonyms(rules).expand(tokenize("growing eggplants and zucchini in a glass house"))
    assert expansion.terms == tokenize("growing eggplants") + ["aubergin", "courgett", "greenhous"]
    assert [m.label() for m in expansion.matches] == [
        "eggplant → aubergine",
        "zucchini → courgette",
        "glass house → greenhouse",
    ]
    assert expansion.via("aubergin") == "eggplant → aubergine"
    assert expansion.via("grow") == ""


def test_equivalence_works_in_both_directions_and_keeps_the_original() -> None:
    synonyms = Synonyms(parse("eggplant, aubergine\n", "s.txt")[0])
    assert synonyms.expand(tokenize("aubergine")).terms == ["aubergin", "eggplant"]
    assert synonyms.expand(tokenize("eggplant")).terms == ["eggplant", "aubergin"]
    assert synonyms.expand(tokenize("tomato")).matches == ()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("a => b => c", "more than one '=>'"),
        ("eggplant, , aubergine", "empty term"),
        ("the, aubergine", "no searchable word"),
        ("aubergine", "at least two terms"),
        ("=> courgette", "empty term"),
    ],
)
def test_bad_lines_are_diagnostics_with_file_and_line(line: str, message: str) -> None:
    rules, problems = parse(f"eggplant, aubergine\n{line}\nzucchini => courgette\n", "syn.txt")
    assert len(rules) == 2
    assert [(p.file, p.line, p.code.value) for p in problems] == [("syn.txt", 2, "INVALID_SYNONYM")]
    assert message in problems[0].message


def test_synonyms_bring_a_unit_in_words_it_never_uses(garden: Path) -> None:
    question = "when to sow eggplant seeds"
    assert _kept(Session.open([garden]), "eggplant") == ()
    (garden / "synonyms.txt").write_text("eggplant, aubergine\n", encoding="utf-8")
    session = Session.open([garden])
    assert len(session.kb.units) == 3  # synonyms.txt is not read as KB text
    outcome, event = _retrieve(session, question)
    assert outcome.evidence_ids[0] == "garden::chunk-000::unit-000"
    assert _kept(session, "eggplant") == ("garden::chunk-000::unit-000",)
    assert event.synonyms == (f"eggplant → aubergine ({garden / 'synonyms.txt'}:1)",)
    row = next(c for c in event.candidates if c.id == "garden::chunk-000::unit-000")
    vias = {t.term: t.via for t in row.bm25_terms}
    assert vias["aubergin"] == "eggplant → aubergine" and vias["sow"] == ""


def test_synonyms_reach_the_hdc_lane(garden: Path) -> None:
    (garden / "synonyms.txt").write_text("zucchini => courgette\n", encoding="utf-8")
    session = Session.open([garden])
    indexes = session.indexes.for_view(session.view(Caller()))
    terms = session.synonyms.expand(tokenize("zucchini glut")).terms
    scores = dict(zip(indexes.hdc.unit_ids, indexes.hdc.scores(indexes.hdc.query(terms, Act.EXPLAIN)), strict=True))
    plain = dict(
        zip(
            indexes.hdc.unit_ids,
            indexes.hdc.scores(indexes.hdc.query(tokenize("zucchini glut"), Act.EXPLAIN)),
            strict=True,
        )
    )
    assert scores["garden::chunk-000::unit-001"] > plain["garden::chunk-000::unit-001"]
    assert max(scores, key=scores.get) == "garden::chunk-000::unit-001"


def test_why_not_names_the_synonym(garden: Path) -> None:
    (garden / "synonyms.txt").write_text("# veg\neggplant, aubergine\n", encoding="utf-8")
    session = Session.open([garden])
    request = Request(question="eggplant seeds", caller=Caller())
    reasons = why_not(session, "garden::chunk-000::unit-000", "eggplant seeds", request)
    assert reasons["synonyms"] == f"eggplant → aubergine ({garden / 'synonyms.txt'}:2)"
    assert "aubergin (synonym eggplant → aubergine)" in reasons["bm25"]


def test_check_validates_the_synonyms_file(garden: Path, capsys) -> None:
    (garden / "synonyms.txt").write_text("eggplant, aubergine\nzucchini =>\n", encoding="utf-8")
    assert main(["check", str(garden)]) == 1
    out = capsys.readouterr().out
    assert f"{garden / 'synonyms.txt'}:2:1: INVALID_SYNONYM" in out or "synonyms.txt:2:1: INVALID_SYNONYM" in out
    assert "synonyms, 1 rule" in out


def test_editing_the_synonyms_file_changes_the_session_fingerprint(garden: Path) -> None:
    (garden / "synonyms.txt").write_text("eggplant, aubergine\n", encoding="utf-8")
    session = Session.open([garden])
    before = session.fingerprint()
    (garden / "synonyms.txt").write_text("eggplant, aubergine\nzucchini => courgette\n", encoding="utf-8")
    assert session.fingerprint() != before
    session.reload()
    assert len(session.synonyms.rules) == 2


def test_retrieve_json_lists_the_synonyms(garden: Path, capsys) -> None:
    (garden / "synonyms.txt").write_text("eggplant, aubergine\n", encoding="utf-8")
    assert main(["--kb", str(garden), "retrieve", "eggplant seeds", "--kb-plugin", "kb-fast", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["synonyms"] == [f"eggplant → aubergine ({garden / 'synonyms.txt'}:1)"]
    assert data["evidence"][0] == "garden::chunk-000::unit-000"


def test_an_unreadable_or_huge_file_is_a_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "synonyms.txt").write_text("a, b\n" * 300_000, encoding="utf-8")
    synonyms, problems = load([tmp_path])
    assert not synonyms and problems[0].line == 1 and "limit" in problems[0].message


def _retrieve(session: Session, question: str):
    plugin = session.registry.get("kb-fast", PluginType.KB)
    context = RunContext(
        request=Request(question=question, caller=Caller()), view=session.view(Caller()), services=None
    )
    result = plugin.retrieve(context, Intent(act=Act.IMPLEMENT, target=question, output="text"))
    return result.outcome, result.trace[0]


def _kept(session: Session, question: str) -> tuple[str, ...]:
    return _retrieve(session, question)[0].evidence_ids
