"""The question is analysed once per run (core/question): the planner, the seed detector, the kb
plugins, the goal solver and the validator all read the Question the kernel made, so the cue
detector and the answer-type reader run once for each distinct question text of a run, through
the real engine on the sample KB."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from core.kernel.contract import Request
from core.kernel.events import AnswerReady, PlanBuilt
from core.kernel.session import Session
from core.question import Question, Questions, answer_types, intent_cues
from core.question.answer_types import AnswerType
from core.units import Act


@pytest.fixture(scope="module")
def session() -> Session:
    return Session.open()


def _counting(monkeypatch: pytest.MonkeyPatch, original: Callable, calls: Counter) -> None:
    """Every module's reference to `original` counts its calls by question text, so a module
    that imported the function by name and calls it again is counted too."""

    def counted(question: str, *args, **kwargs):
        calls[question] += 1
        return original(question, *args, **kwargs)

    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("core") and getattr(module, original.__name__, None) is original:
            monkeypatch.setattr(module, original.__name__, counted)


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Counter]]:
    found = {"question_cues": Counter(), "expected_type": Counter()}
    _counting(monkeypatch, intent_cues.question_cues, found["question_cues"])
    _counting(monkeypatch, answer_types.expected_type, found["expected_type"])
    yield found


@pytest.mark.parametrize(
    "question",
    [
        "How often should Vault master keys be rotated?",  # a typed lead, checked again by val-grounded
        "Why is Atlas relevant for compliance audits?",  # a proof chain
        "Does Atlas have distributed tracing?",  # yes or no
        "Is Orion a good fit for transactional workloads with many row updates?",
    ],
)
def test_a_run_analyses_its_question_once(session: Session, counts: dict[str, Counter], question: str) -> None:
    events = list(session.run(Request(question=question)))
    plans = [e for e in events if isinstance(e, PlanBuilt)]
    assert isinstance(events[-2], AnswerReady) and plans
    assert counts["question_cues"] == Counter({question: 1}), counts["question_cues"]
    # The answer type is read where an answer is composed: once, whatever the revisions (plans).
    assert counts["expected_type"] == Counter({question: 1}), (len(plans), counts["expected_type"])


def test_each_sub_question_is_analysed_once(session: Session, counts: dict[str, Counter]) -> None:
    asked = "What is Orion and also what is Helix?"
    events = list(session.run(Request(question=asked)))
    assert isinstance(events[-2], AnswerReady) and len(events[-2].parts) == 2
    # The whole input (the planner's) and each sub-question (its intent's), once each.
    assert counts["question_cues"] == Counter({asked: 1, "What is Orion?": 1, "What is Helix?": 1})
    assert set(counts["expected_type"]) <= {"What is Orion?", "What is Helix?"}
    assert all(n == 1 for n in counts["expected_type"].values())


def test_questions_keeps_one_question_per_text() -> None:
    questions = Questions()
    first = questions.of("Who repaired the lamp?")
    assert questions.of("Who repaired the lamp?") is first and questions.of("Who repaired the bell?") is not first


def test_a_comparison_asks_for_a_comparison_unless_its_wording_asks_for_a_list_or_yes_or_no() -> None:
    compared = Question("Is Orion or Helix faster?")
    assert len(compared.cues.compared) == 2
    assert compared.expected_for(Act.COMPARE).type is AnswerType.COMPARISON
    assert compared.expected_for(Act.IDENTIFY) == compared.expected
    listed = Question("List the differences between canary and blue-green deployments.")
    assert listed.expected_for(Act.COMPARE).type is AnswerType.LIST


def test_the_answer_plan_tries_the_strategies_in_order() -> None:
    from core.plugins.solve import STRATEGIES, AnswerPlan
    from core.units import Intent

    def tried(act: Act, text: str) -> list[str]:
        plan = AnswerPlan.of(Intent(act=act, target=text, output="text"), Question(text))
        return [s.name for s in STRATEGIES if s.applies(plan)]

    assert [s.name for s in STRATEGIES][-1] == "quoted evidence"
    assert tried(Act.EXPLAIN, "Why is Atlas relevant for compliance audits?")[0] == "proof chain"
    assert tried(Act.IDENTIFY, "Who maintains the lighthouse?")[:2] == ["typed lead", "answer form"]
    assert "proof chain" not in tried(Act.IDENTIFY, "Who maintains the lighthouse?")  # a chain names no person
    assert tried(Act.IMPLEMENT, "How do I install Orion?") == ["procedure", "quoted evidence"]
    assert tried(Act.COMPARE, "Is Orion or Helix faster?")[:2] == ["answer form", "comparison"]


def test_no_stage_of_a_run_analyses_the_question_itself() -> None:
    """The kernel and the plugins reach the question's analysis only through the Question: none
    imports the analysers (a plugin that did would analyse the question again)."""
    import ast
    from pathlib import Path

    core = Path(__file__).resolve().parents[3] / "core"
    analysers = {"question_cues", "expected_type", "question_terms", "asked_relation"}
    found = []
    for path in [*sorted((core / "kernel").glob("*.py")), *sorted((core / "plugins").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                found += [f"{path.name}: {alias.name}" for alias in node.names if alias.name in analysers]
    assert not found, found


@pytest.mark.parametrize(
    ("question", "unrequired"),
    [
        # A pronoun the stopwords let through stands for what is asked about, or for anyone.
        ("In whose hands was the castle left?", "whose"),
        ("How long before someone would reach the lighthouse?", "someone"),
    ],
)
def test_a_pronoun_is_no_term_the_evidence_must_say(question: str, unrequired: str) -> None:
    asked = Question(question)
    required = [t.word.lower() for t in asked.required_terms(asked.expected)]
    assert unrequired in [t.word.lower() for t in asked.terms] and unrequired not in required
    assert required  # the content words stay
