"""Hardening of the ThinkingDB rule loader: whatever is in the rules file, `load_rules` returns a
RuleSet (never raises), every kept rule is a valid Horn rule, and one broken rule never takes the
others down.

Derandomised property tests (fixed seed, no example database); `HARDENING_EXAMPLES=10` scales them.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.infra.config import ConfigError, load_retrieval_config
from core.infra.diagnostics import Code, Diagnostic
from core.retrieval.rules import MAX_PREMISES, Rule, RuleSet, load_rules, symbol_key
from tests.support.fuzz_settings import derandomised

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_TEXT = (ROOT / "config" / "thinkingdb.json").read_text(encoding="utf-8")
DEFAULT = json.loads(DEFAULT_TEXT)


@contextmanager
def rules_file(text: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "thinkingdb.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        yield path


def load_text(text: str) -> RuleSet:
    with rules_file(text) as path:
        ruleset = load_rules(path)
        assert_well_formed(ruleset, text, str(path))
        return ruleset


def assert_well_formed(ruleset: RuleSet, text: str, file: str) -> None:
    assert isinstance(ruleset, RuleSet)
    # The file is read with universal newlines, so a lone CR ends a line too.
    lines = text.replace("\r\n", "\n").replace("\r", "\n").count("\n") + 1
    for diagnostic in ruleset.diagnostics:
        assert isinstance(diagnostic, Diagnostic) and isinstance(diagnostic.code, Code)
        assert diagnostic.file == file and diagnostic.message
        assert diagnostic.line >= 1 and diagnostic.line <= lines and diagnostic.col >= 1, diagnostic
    ids = [rule.id for rule in ruleset.rules]
    assert len(ids) == len(set(ids))
    for rule in ruleset.rules:
        assert isinstance(rule, Rule) and rule.id
        assert len(rule.when) >= 1 and len(rule.when) <= MAX_PREMISES
        assert 0 < rule.weight <= 1 and not math.isnan(rule.weight)
        bound = set().union(*(premise.variables() for premise in rule.when))
        assert rule.then.variables() <= bound
        assert ruleset.rule_lines[rule.id] >= 1 and ruleset.rule_lines[rule.id] <= lines


def assert_no_silent_drops(data: object, ruleset: RuleSet) -> None:
    """A rule that was written but not kept always comes with an error saying why."""
    written = data.get("rules") if isinstance(data, dict) else None
    if isinstance(written, list) and len(ruleset.rules) < len(written):
        assert any(d.is_error for d in ruleset.diagnostics)


# --- strategies ------------------------------------------------------------------------------

TERMS = ["?x", "?y", "?z", "?c", "?g", "?", "? ", "Orion", "", " ", "'\"", "?x?", "\u00e9t\u00e9", "?\u00e9"]
RELATIONS = [
    "uses",
    "provides",
    "depends_on",
    "Depends on",
    "relevant-for",
    "has_capability",
    "causes",
    "?r",
    "",
    "__",
    "frobs",
    "part of",
]
KEYS = ["id", "description", "when", "then", "weight", "maxDepth", "max_depth", "s", "r", "o", "Id", "extra"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(TERMS + RELATIONS)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), children, max_size=5)
    ),
    max_leaves=30,
)
patterns = (
    st.fixed_dictionaries(
        {"s": st.sampled_from(TERMS), "r": st.sampled_from(RELATIONS), "o": st.sampled_from(TERMS)},
        optional={"extra": json_values},
    )
    | json_values
)
rule_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=8) | json_values,
        "description": st.text(max_size=10),
        "when": st.lists(patterns, max_size=5) | json_values,
        "then": patterns,
        "weight": st.floats(allow_nan=True, allow_infinity=True) | st.integers(-3, 3) | json_values,
        "maxDepth": st.integers(-2, 5) | json_values,
    },
)
documents = (
    st.fixed_dictionaries(
        {},
        optional={
            "limits": st.dictionaries(st.sampled_from(list(DEFAULT["limits"]) + ["bogus"]), scalars, max_size=4)
            | json_values,
            "relations": st.lists(st.sampled_from(RELATIONS) | st.text(max_size=5), max_size=4) | json_values,
            "rules": st.lists(rule_like, max_size=6) | json_values,
            "other": json_values,
        },
    )
    | json_values
)


@derandomised(100, hunt=300)  # 4.9 CPU s at 300 (load ~10); make fuzz runs 3,000
@given(data=documents, indent=st.sampled_from([None, 0, 2]))
def test_any_json_document_loads_without_raising(data: object, indent: int | None) -> None:
    assert_no_silent_drops(data, load_text(json.dumps(data, indent=indent)))


@derandomised(200)
@given(text=st.text(max_size=200) | st.text(alphabet='{}[]":,0123456789.eE-+ntrufalsNI \n\\', max_size=200))
def test_any_text_loads_without_raising(text: str) -> None:
    load_text(text)


@derandomised(150)
@given(
    cut=st.integers(0, len(DEFAULT_TEXT)),
    drop_line=st.integers(0, DEFAULT_TEXT.count("\n")),
    what=st.sampled_from(["cut", "drop", "both"]),
)
def test_a_damaged_rules_file_loads_without_raising(cut: int, drop_line: int, what: str) -> None:
    text = DEFAULT_TEXT
    if what in ("drop", "both"):
        lines = text.split("\n")
        del lines[drop_line]
        text = "\n".join(lines)
    if what in ("cut", "both"):
        text = text[:cut]
    load_text(text)


# --- one bad rule, the others survive ----------------------------------------------------------

ORIGINAL = load_rules(ROOT / "config" / "thinkingdb.json")


@st.composite
def one_rule_broken(draw) -> tuple[dict, int]:
    """The bundled rules file with rule `k` (or a top-level section) mutated; returns (data, k or -1)."""
    data = copy.deepcopy(DEFAULT)
    rules = data["rules"]
    where = draw(st.sampled_from(["rule", "rule", "rule", "limits", "relations", "top"]))
    if where == "limits":
        data["limits"] = draw(json_values)
        return data, -1
    if where == "relations":
        data["relations"] = draw(json_values)
        return data, -1
    if where == "top":
        data[draw(st.text(max_size=6).filter(lambda k: k not in data))] = draw(json_values)
        return data, -1
    k = draw(st.integers(0, len(rules) - 1))
    rule = rules[k]
    how = draw(st.sampled_from(["delete", "replace", "rename", "relation", "weight", "premises", "unbind", "whole"]))
    if how == "delete":
        rule.pop(draw(st.sampled_from(sorted(rule))))
    elif how == "replace":
        rule[draw(st.sampled_from(sorted(rule)))] = draw(json_values)
    elif how == "rename":
        old = draw(st.sampled_from(sorted(rule)))
        rule[draw(st.sampled_from(KEYS) | st.text(max_size=5))] = rule.pop(old)
    elif how == "relation":
        target = draw(st.sampled_from(rule["when"] + [rule["then"]]))
        target["r"] = draw(st.sampled_from(RELATIONS) | st.text(max_size=6))
    elif how == "weight":
        rule["weight"] = draw(
            st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0, 1, 1.0000001, -0.0, True])
        )
    elif how == "premises":
        rule["when"] = rule["when"] * draw(st.integers(0, 3))
    elif how == "unbind":
        rule["then"]["o"] = draw(st.sampled_from(TERMS))
    else:
        rules[k] = draw(json_values)
    return data, k


def _survivors(data: dict, k: int) -> list[Rule]:
    """The original rules expected to load unchanged: all but `k`, and any that `k` now duplicates."""
    new_id = data["rules"][k].get("id") if k >= 0 and isinstance(data["rules"][k], dict) else None
    return [rule for j, rule in enumerate(ORIGINAL.rules) if j != k and not (rule.id == new_id and j > k)]


@derandomised(40, hunt=300)
@given(case=one_rule_broken())
def test_valid_rules_survive_a_broken_neighbour(case: tuple[dict, int]) -> None:
    data, k = case
    ruleset = load_text(json.dumps(data, indent=2))
    kept = {rule.id: rule for rule in ruleset.rules}
    for rule in _survivors(data, k):
        assert kept.get(rule.id) == rule, f"rule {rule.id} was lost after mutating #{k}"
    assert_no_silent_drops(data, ruleset)


# --- inputs Python's json module itself cannot take ----------------------------------------------


def test_deeply_nested_json_is_a_diagnostic() -> None:
    # Around the interpreter's limit either call may be the one that overflows, whatever the stack
    # depth pytest runs at; far beyond it, json.loads does.
    for depth in [*range(900, 1010), 100_000]:
        nested = "[" * depth + "]" * depth
        text = '{"rules": [{"id": "a", "when": [{"s": "?x", "r": "uses", "o": ' + nested + "}], "
        text += '"then": {"s": "?x", "r": "uses", "o": "?x"}, "weight": 0.5}]}'
        ruleset = load_text(text)
        assert ruleset.rules == () and ruleset.diagnostics
        # Locating the bad limit means decoding past the nested value.
        ruleset = load_text('{"x": ' + nested + ', "limits": {"maxDepth": 0}}')
        assert ruleset.diagnostics


def test_a_huge_integer_literal_is_a_diagnostic() -> None:
    ruleset = load_text('{"limits": {"maxDepth": ' + "9" * 5000 + "}}")
    assert [d.code for d in ruleset.diagnostics] == [Code.INVALID_JSON]


# Nesting is refused where it passes the depth limit (core/infra/json_limits.py: the bracket after
# `{"profiles": ` and 99 more opens it at column 13 + 100); an integer json cannot take, where it starts.
@pytest.mark.parametrize(
    ("value", "col"), [("[" * 100_000 + "]" * 100_000, 113), ("9" * 5000, 14)], ids=["nesting", "integer"]
)
def test_other_config_files_report_what_json_cannot_take(value: str, col: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "retrieval.json").write_text('{"profiles": ' + value + "}", encoding="utf-8")
        with pytest.raises(ConfigError) as caught:
            load_retrieval_config(Path(folder))
    assert [(d.code, d.line, d.col) for d in caught.value.diagnostics] == [(Code.INVALID_JSON, 1, col)]


def test_a_term_with_a_long_punctuation_run_does_not_hang() -> None:
    import signal

    def expire(signum, frame):
        raise TimeoutError("load_rules still running after 1 s")

    term = "Orion" + "." * 50_000 + "Helix"
    text = json.dumps(
        {
            "rules": [
                {
                    "id": "a",
                    "when": [{"s": "?x", "r": "uses", "o": term}],
                    "then": {"s": "?x", "r": "uses", "o": "?x"},
                    "weight": 0.5,
                }
            ]
        }
    )
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, 1)
    try:
        ruleset = load_text(text)
        key = symbol_key(f'("{term}")' + "." * 50_000)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert [rule.id for rule in ruleset.rules] == ["a"]
    assert key == term.casefold()
