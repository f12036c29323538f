"""Every example in the reference docs runs: fenced blocks tagged ```mrptui-example KIND [FILE].

KINDs: md / cnl / txt (a KB file: loads with no error; the doc's KB is all of them), units (the
ids and claims the block before it becomes), intent (Intent CNL), rules (a thinkingdb.json),
queries (a queries.json: loads, and eval over the doc's KB passes every check and gate), proof
(a question and the proof tree kb-thinkingdb builds for it over the doc's KB and rules).
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from core.cnl import parse_intents, read_text
from core.eval.labelled import evaluate, load_queries
from core.infra.resources import config_dir
from core.kernel.contract import PluginType, Request, RunContext
from core.kernel.session import Session
from core.question.intent_cues import question_cues
from core.retrieval.rules import load_rules
from core.text.synonyms import parse as parse_synonyms
from core.units import Intent

DOCS = Path(__file__).resolve().parents[3] / "docs"
REFERENCE = ("formats.md", "rules.md", "queries.md")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
KB_KINDS = {"md": ".md", "cnl": ".cnl", "txt": ".txt", "jsonl": ".jsonl"}


@dataclass(frozen=True)
class Example:
    kind: str
    name: str
    text: str
    line: int


def examples(doc: str) -> list[Example]:
    text = (DOCS / doc).read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        info = match.group(1).split()
        line = text.count("\n", 0, match.start()) + 1
        assert info and info[0] == "mrptui-example", f"{doc}:{line}: every example must be tagged mrptui-example"
        kind = info[1]
        name = info[2] if len(info) > 2 else f"example{KB_KINDS.get(kind, '.json')}"
        found.append(Example(kind, name, match.group(2), line))
    return found


@pytest.fixture(params=REFERENCE)
def doc(request) -> str:
    return request.param


def test_each_reference_doc_has_examples_and_only_known_kinds(doc: str) -> None:
    kinds = [e.kind for e in examples(doc)]
    assert kinds, f"{doc} has no example"
    assert set(kinds) <= {*KB_KINDS, "units", "intent", "rules", "queries", "proof", "synonyms"}


def _workspace(doc: str, tmp_path: Path) -> tuple[Path, Path]:
    """The doc's KB files and (if it has one) its rules file, in a KB folder and a config copy."""
    kb, config = tmp_path / "kb", tmp_path / "config"
    kb.mkdir()
    shutil.copytree(config_dir(), config)
    for example in examples(doc):
        if example.kind in KB_KINDS:
            (kb / example.name).write_text(example.text, encoding="utf-8")
        elif example.kind == "rules":
            (config / "thinkingdb.json").write_text(example.text, encoding="utf-8")
    return kb, config


def test_kb_blocks_load_without_errors_and_units_blocks_match(doc: str) -> None:
    previous = None
    for example in examples(doc):
        where = f"{doc}:{example.line}"
        if example.kind in KB_KINDS:
            result = read_text(example.text, example.name)
            assert [d.format() for d in result.diagnostics if d.is_error] == [], where
            assert result.units, where
            previous = result.units
        elif example.kind == "units":
            listed = [line.split("  ", 1) for line in example.text.strip().splitlines()]
            assert [[u.id, u.claim] for u in previous] == listed, where


def test_intent_rules_and_synonyms_blocks_are_valid(doc: str, tmp_path: Path) -> None:
    for example in examples(doc):
        where = f"{doc}:{example.line}"
        if example.kind == "synonyms":
            rules, problems = parse_synonyms(example.text, example.name)
            assert problems == [] and rules, where
        elif example.kind == "intent":
            intents, problems = parse_intents(example.text, "intent.cnl")
            assert problems == [] and intents, where
        elif example.kind == "rules":
            path = tmp_path / "thinkingdb.json"
            path.write_text(example.text, encoding="utf-8")
            ruleset = load_rules(path)
            assert [d.format() for d in ruleset.diagnostics] == [], where
            assert len(ruleset.rules) == len(json.loads(example.text)["rules"]), where


def _docs_with(kind: str) -> list[str]:
    return [doc for doc in REFERENCE if any(e.kind == kind for e in examples(doc))]


def _doc_session(doc: str, tmp_path: Path) -> Session:
    kb, config = _workspace(doc, tmp_path)
    session = Session.open([kb], config)
    assert session.health().errors == 0, session.health().summary
    return session


@pytest.mark.parametrize("doc_with_queries", _docs_with("queries"))
def test_queries_blocks_load_and_eval_passes_on_the_docs_kb(doc_with_queries: str, tmp_path: Path) -> None:
    doc = doc_with_queries
    session = _doc_session(doc, tmp_path)
    for example in (e for e in examples(doc) if e.kind == "queries"):
        path = tmp_path / "queries.json"
        path.write_text(example.text, encoding="utf-8")
        queries = load_queries(path)
        plugins = [p.id for p in session.registry.of_type(PluginType.KB)]
        report = evaluate(session, queries, plugins)
        assert report.safe, [g for g in report.gates if not g.passed]
        assert all(a.failures == {} for a in report.answers), report.answers
        assert not any(report.unknown_ids.values()), report.unknown_ids
        for spec in queries:
            if spec.expect_evidence:
                result = next(r for r in report.queries if r.id == spec.id)
                assert any(set(spec.expect_evidence) <= set(run.kept) for run in result.retrieval), spec.id


def _tree(node: dict, prefix: str = "", last: bool = True, root: bool = True) -> list[str]:
    head = f"{node['fact']}  conf {node['confidence']:.2f}"
    if root:
        head += f"  pathScore {node['score']:.4f}"
    if node["rule"]:
        head += f"  ⇐ {node['rule']} (weight {node['weight']:g})"
    else:
        head += "  [" + ", ".join(node["units"]) + "]"
    lines = [head if root else f"{prefix}{'└── ' if last else '├── '}{head}"]
    child_prefix = "" if root else prefix + ("    " if last else "│   ")
    for index, premise in enumerate(node["premises"]):
        lines += _tree(premise, child_prefix, index == len(node["premises"]) - 1, root=False)
    return lines


@pytest.mark.parametrize("doc_with_proofs", _docs_with("proof"))
def test_proof_blocks_are_the_trees_the_engine_builds(doc_with_proofs: str, tmp_path: Path) -> None:
    doc = doc_with_proofs
    session = _doc_session(doc, tmp_path)
    plugin = session.registry.get("kb-thinkingdb", PluginType.KB)
    for example in (e for e in examples(doc) if e.kind == "proof"):
        first, *expected = example.text.strip().splitlines()
        question = first.removeprefix("question: ")
        request = Request(question=question)
        intent = Intent(act=question_cues(question).act, target=question, output="text")
        result = plugin.retrieve(RunContext(request=request, view=session.view(request.caller), services=None), intent)
        proofs = result.outcome.lane_details["tdb"].proofs
        assert proofs, f"{doc}:{example.line}: no proof"
        assert _tree(proofs[0].to_dict()) == expected, f"{doc}:{example.line}"
