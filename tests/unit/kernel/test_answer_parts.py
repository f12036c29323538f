"""An answer is built from its parts (the lead and what it rests on) and written once; no surface
parses our own answer text back into them. Only an LLM's text is read for its lead, by one parser
(core/answer/llm_answer.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from core.answer.answer_forms import Draft
from core.answer.llm_answer import lead_of
from core.kernel.contract import Request
from core.kernel.events import AnswerReady
from core.kernel.session import Session
from core.memory.turns import turn_of

ROOT = Path(__file__).resolve().parents[3]
MARKER = "because:"
# The only module that may read "because:" out of an answer's text: the LLM parser. The
# evaluation reads each answer's lead from its parts (core/eval/answer_checks.py), and agrees
# with the SQuAD judge's reading of the text row by row (tests/cli/test_squad.py).
READERS = {"core/answer/llm_answer.py"}


def _reads_marker(source: str) -> bool:
    """A string holding the marker outside an f-string (which writes it) and a docstring."""
    if "because" not in source:  # no literal can hold it (escapes aside): no parse of the tree
        return False
    tree = ast.parse(source)
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    written = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and MARKER in node.value
        and id(node) not in docstrings
        and id(node) not in written
        for node in ast.walk(tree)
    )


def test_no_module_but_the_llm_parser_reads_because_out_of_an_answer() -> None:
    readers = {
        path.relative_to(ROOT).as_posix()
        for package in ("core", "mrptui")
        for path in (ROOT / package).rglob("*.py")
        if _reads_marker(path.read_text(encoding="utf-8"))
    }
    assert readers == READERS


def test_the_scan_tells_reading_from_writing() -> None:
    assert _reads_marker('def lead(text):\n    return text.split(", because:")[0]\n')
    assert _reads_marker('_AT = ", because:"\n')
    assert not _reads_marker(
        'def led(lead, why):\n    """LEAD, because: WHY"""\n    return f"{lead}, because: {why}"\n'
    )


def test_a_draft_with_a_lead_is_written_from_it() -> None:
    draft = Draft.led(
        "Ada Brenner", "Ada Brenner repaired the lamp [log::chunk-000::unit-000].", ["log::chunk-000::unit-000"], "m"
    )
    assert draft.text == "Ada Brenner, because: Ada Brenner repaired the lamp [log::chunk-000::unit-000]."
    assert draft.lead == "Ada Brenner" and draft.cited == ("log::chunk-000::unit-000",)


def test_the_llm_parser_reads_the_lead_an_llm_wrote() -> None:
    assert lead_of("Every 90 days, because: keys rotate every 90 days [a::chunk-000::unit-000].") == "Every 90 days"
    assert lead_of("Keys rotate every 90 days [a::chunk-000::unit-000].") == ""


def test_the_run_carries_the_lead_to_memory_without_reading_the_text() -> None:
    session = Session.open()
    events = list(session.run(Request(question="How often should Vault master keys be rotated?")))
    answer = events[-2]
    assert isinstance(answer, AnswerReady) and answer.status == "grounded", answer.answer
    (part,) = answer.parts
    assert part.lead and part.answer.startswith(f"{part.lead}, because: ")
    turn = turn_of(events)
    assert turn is not None and turn.lead == part.lead
