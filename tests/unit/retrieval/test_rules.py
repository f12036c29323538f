from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.infra.diagnostics import Code, Severity
from core.retrieval.rules import Limits, check_rules_file, load_rules, relation_key, symbol_key

GOOD = '{"id": "good", "when": [{"s": "?x", "r": "uses", "o": "?y"}], "then": {"s": "?x", "r": "about", "o": "?y"}, "weight": 0.5}'


def write_rules(tmp_path: Path, rule_lines: list[str], head: str = "") -> Path:
    """A rules file with one rule per line, starting on line 3 (line 1 is `{`, line 2 `"rules": [`)."""
    path = tmp_path / "thinkingdb.json"
    body = ",\n".join(rule_lines)
    path.write_text('{\n  "rules": [\n' + body + "\n  ]" + head + "\n}\n", encoding="utf-8")
    return path


def test_bundled_rules_load_cleanly() -> None:
    ruleset = load_rules()
    assert [r.id for r in ruleset.rules] == [
        "tool_to_capability",
        "capability_to_relevance",
        "provider_to_relevance",
        "dependency_transitive",
        "dependency_capability",
        "dependency_provides",
        "uses_transitive",
        "use_dependency",
        "dependency_relevance",
        "support_to_relevance",
        "causal_chain",
    ]
    assert ruleset.diagnostics == ()
    # The bundled config allows four-step chains (docs/decisions.md); every other limit is the default.
    assert ruleset.limits == Limits(max_depth=4)
    tool = ruleset.rules[0]
    assert [(p.s, p.r, p.o) for p in tool.when] == [("?x", "uses", "?y"), ("?y", "provides", "?z")]
    assert (tool.then.s, tool.then.r, tool.then.o, tool.weight) == ("?x", "has_capability", "?z", 0.95)
    assert str(tool.then) == "?x has_capability ?z"
    assert all(r.description for r in ruleset.rules)
    assert ruleset.rule_lines["tool_to_capability"] == 18


def test_default_limits_match_the_design() -> None:
    limits = Limits()
    assert (limits.max_depth, limits.max_seed_facts, limits.max_derived_facts, limits.max_proofs) == (3, 8, 64, 32)
    assert (limits.min_confidence, limits.distance_penalty, limits.goal_bonus, limits.seed_bonus) == (
        0.15,
        0.25,
        1.15,
        1.10,
    )


@pytest.mark.parametrize(
    ("rule", "code"),
    [
        (
            '{"id": "r", "when": [{"s": "?x", "r": "uses", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?z"}, "weight": 0.5}',
            Code.RULE_UNBOUND_HEAD_VARIABLE,
        ),
        (
            '{"id": "r", "when": ['
            + ", ".join(['{"s": "?x", "r": "uses", "o": "?x"}'] * 4)
            + '], "then": {"s": "?x", "r": "uses", "o": "?x"}, "weight": 0.5}',
            Code.RULE_TOO_MANY_PREMISES,
        ),
        ('{"id": "r", "when": [], "then": {"s": "a", "r": "uses", "o": "b"}, "weight": 0.5}', Code.RULE_EMPTY_BODY),
        (
            '{"id": "r", "when": [{"s": "?x", "r": "uses", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?y"}, "weight": 1.5}',
            Code.RULE_WEIGHT_OUT_OF_RANGE,
        ),
        (
            '{"id": "r", "when": [{"s": "?x", "r": "uses", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?y"}, "weight": 0}',
            Code.RULE_WEIGHT_OUT_OF_RANGE,
        ),
        (
            '{"id": "r", "when": [{"s": "?x", "r": "uses"}], "then": {"s": "?x", "r": "uses", "o": "?x"}, "weight": 0.5}',
            Code.RULE_MALFORMED,
        ),
        ('{"id": "r", "when": [{"s": "?x", "r": "uses", "o": "?y"}], "weight": 0.5}', Code.RULE_MALFORMED),
        (
            '{"id": "r", "when": [{"s": "?x", "r": "uses", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?y"}, "weight": "high"}',
            Code.RULE_MALFORMED,
        ),
        (
            '{"id": "r", "when": [{"s": "?x", "r": "?r", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?y"}, "weight": 0.5}',
            Code.RULE_MALFORMED,
        ),
        ('"not a rule"', Code.RULE_MALFORMED),
    ],
)
def test_each_rule_error_is_reported_on_its_line_and_the_rule_dropped(tmp_path: Path, rule: str, code: Code) -> None:
    path = write_rules(tmp_path, [GOOD, rule, GOOD.replace('"good"', '"good2"')])
    ruleset = load_rules(path)
    assert [r.id for r in ruleset.rules] == ["good", "good2"]
    assert [(d.code, d.line, d.severity) for d in ruleset.diagnostics] == [(code, 4, Severity.ERROR)]
    assert ruleset.diagnostics[0].file == str(path)


def test_unknown_relation_only_warns_and_the_rule_is_kept(tmp_path: Path) -> None:
    rule = '{"id": "odd", "when": [{"s": "?x", "r": "likes", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?y"}, "weight": 0.5}'
    ruleset = load_rules(write_rules(tmp_path, [GOOD, rule]))
    assert [r.id for r in ruleset.rules] == ["good", "odd"]
    [diagnostic] = ruleset.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.severity) == (Code.RULE_UNKNOWN_RELATION, 4, Severity.WARNING)
    assert "likes" in diagnostic.message


def test_declared_relations_are_known(tmp_path: Path) -> None:
    rule = '{"id": "odd", "when": [{"s": "?x", "r": "Likes", "o": "?y"}], "then": {"s": "?x", "r": "uses", "o": "?y"}, "weight": 0.5}'
    ruleset = load_rules(write_rules(tmp_path, [rule], head=',\n  "relations": ["likes"]'))
    assert ruleset.diagnostics == ()
    assert "likes" in ruleset.relations
    assert ruleset.rules[0].when[0].r == "likes"


def test_duplicate_id_drops_the_second_rule(tmp_path: Path) -> None:
    second = GOOD.replace('"weight": 0.5', '"weight": 0.7')
    ruleset = load_rules(write_rules(tmp_path, [GOOD, second]))
    assert [(r.id, r.weight) for r in ruleset.rules] == [("good", 0.5)]
    assert [(d.code, d.line) for d in ruleset.diagnostics] == [(Code.RULE_DUPLICATE_ID, 4)]


def test_malformed_field_points_at_the_field_line(tmp_path: Path) -> None:
    path = tmp_path / "thinkingdb.json"
    rules = {"rules": [json.loads(GOOD), {**json.loads(GOOD), "id": "bad", "weight": "x"}]}
    path.write_text(json.dumps(rules, indent=2), encoding="utf-8")
    text_lines = path.read_text().splitlines()
    ruleset = load_rules(path)
    [diagnostic] = ruleset.diagnostics
    assert diagnostic.code is Code.RULE_MALFORMED
    assert '"weight": "x"' in text_lines[diagnostic.line - 1]
    assert "bad" in diagnostic.message


def test_invalid_json_gives_position_and_empty_rules(tmp_path: Path) -> None:
    path = tmp_path / "thinkingdb.json"
    path.write_text('{\n  "rules": [\n    {"id": "x",,}\n  ]\n}\n', encoding="utf-8")
    ruleset = load_rules(path)
    assert ruleset.rules == ()
    assert ruleset.limits == Limits()
    [diagnostic] = ruleset.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == (Code.INVALID_JSON, 3, 16)


def test_missing_file_is_a_diagnostic(tmp_path: Path) -> None:
    ruleset = load_rules(tmp_path / "nope.json")
    assert [d.code for d in ruleset.diagnostics] == [Code.FILE_UNREADABLE]
    assert ruleset.rules == ()


def test_bad_limits_fall_back_to_defaults_and_rules_still_load(tmp_path: Path) -> None:
    path = write_rules(tmp_path, [GOOD], head=',\n  "limits": {\n    "maxDepth": 0\n  }')
    ruleset = load_rules(path)
    assert ruleset.limits == Limits()
    assert [r.id for r in ruleset.rules] == ["good"]
    [diagnostic] = ruleset.diagnostics
    assert (diagnostic.code, diagnostic.line) == (Code.INVALID_CONFIG, 6)


def test_limits_past_their_upper_bound_are_errors_at_their_line_and_take_their_default(tmp_path: Path) -> None:
    head = ',\n  "limits": {\n    "maxDepth": 1000,\n    "maxDerivedFacts": 1e8,\n    "maxJoinRows": 100000000,\n    "maxProofs": 10\n  }'
    ruleset = load_rules(write_rules(tmp_path, [GOOD], head=head))
    limits = ruleset.limits
    assert (limits.max_depth, limits.max_derived_facts, limits.max_join_rows) == (3, 64, Limits().max_join_rows)
    assert limits.max_proofs == 10  # the valid limit beside them is kept
    assert [(d.code, d.line, d.is_error) for d in ruleset.diagnostics] == [
        (Code.INVALID_CONFIG, n, True) for n in (6, 7, 8)
    ]
    depth, derived, join = (d.message for d in ruleset.diagnostics)
    assert depth == "limits.maxDepth: Input should be less than or equal to 32; using the default 3"
    assert derived == "limits.maxDerivedFacts: Input should be a valid integer; using the default 64"
    assert join.startswith("limits.maxJoinRows: Input should be less than or equal to 1000000;")
    assert [r.id for r in ruleset.rules] == ["good"]


def test_a_misspelt_limit_is_named_with_a_hint_and_the_limits_beside_it_are_kept(tmp_path: Path) -> None:
    head = ',\n  "limits": {\n    "maxDepth": 4,\n    "maxDerivedFact": 100\n  }'
    ruleset = load_rules(write_rules(tmp_path, [GOOD], head=head))
    assert ruleset.limits == Limits(max_depth=4)
    [diagnostic] = ruleset.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.is_error) == (Code.INVALID_CONFIG, 7, True)
    assert diagnostic.message == "limits.maxDerivedFact: unknown key; did you mean 'maxDerivedFacts'?; ignored"


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (GOOD.replace('"when"', '"wen"'), "rule good: wen: unknown key; did you mean 'when'?"),
        (GOOD.replace('"weight"', '"wieght"'), "rule good: wieght: unknown key; did you mean 'weight'?"),
        (GOOD.replace('"r": "about"', '"rel": "about"'), "rule good: then.rel: unknown key; expected one of s, r, o"),
    ],
)
def test_a_misspelt_rule_key_gets_a_hint(tmp_path: Path, rule: str, expected: str) -> None:
    ruleset = load_rules(write_rules(tmp_path, [rule]))
    assert ruleset.rules == ()
    assert expected in [d.message for d in ruleset.diagnostics]


@pytest.mark.parametrize("name", list(Limits.model_fields))
def test_every_limit_has_an_upper_bound(name: str) -> None:
    bounds = [getattr(m, "le", None) or getattr(m, "lt", None) for m in Limits.model_fields[name].metadata]
    assert any(b is not None for b in bounds)


def test_a_rule_max_depth_past_the_bound_drops_the_rule_with_its_line(tmp_path: Path) -> None:
    deep = GOOD.replace('"good"', '"deep"').replace('"weight": 0.5', '"weight": 0.5, "maxDepth": 1000')
    ruleset = load_rules(write_rules(tmp_path, [GOOD, deep]))
    assert [r.id for r in ruleset.rules] == ["good"]
    [diagnostic] = ruleset.diagnostics
    assert (diagnostic.code, diagnostic.line) == (Code.RULE_MALFORMED, 4)
    assert "maxDepth" in diagnostic.message and "32" in diagnostic.message


def test_limits_are_read_from_the_file(tmp_path: Path) -> None:
    path = write_rules(tmp_path, [GOOD], head=',\n  "limits": {"maxDepth": 2, "minConfidence": 0.5}')
    limits = load_rules(path).limits
    assert (limits.max_depth, limits.min_confidence, limits.max_derived_facts) == (2, 0.5, 64)


def test_check_rules_file_lists_every_problem(tmp_path: Path) -> None:
    bad_weight = GOOD.replace('"good"', '"w"').replace("0.5", "2")
    path = write_rules(tmp_path, [GOOD, bad_weight, GOOD])
    diagnostics = check_rules_file(path)
    assert [(d.code, d.line) for d in diagnostics] == [(Code.RULE_WEIGHT_OUT_OF_RANGE, 4), (Code.RULE_DUPLICATE_ID, 5)]
    assert diagnostics[0].format().startswith(f"{path}:4:")


def test_symbol_and_relation_normalisation() -> None:
    assert symbol_key("  Orion_Cluster. ") == symbol_key("orion-cluster") == "orion cluster"
    assert symbol_key('"(Orion)"') == "orion"
    assert symbol_key("C++") != symbol_key("C")
    assert relation_key("Depends on") == relation_key("depends-on") == "depends_on"


def test_rule_constants_keep_their_spelling(tmp_path: Path) -> None:
    rule = '{"id": "c", "when": [{"s": "?x", "r": "uses", "o": "Kafka"}], "then": {"s": "?x", "r": "about", "o": "Streaming"}, "weight": 1}'
    [loaded] = load_rules(write_rules(tmp_path, [rule])).rules
    assert (loaded.when[0].o, loaded.then.o, loaded.weight) == ("Kafka", "Streaming", 1.0)


def test_10000_rules_are_placed_at_their_own_lines_and_columns(tmp_path: Path) -> None:
    """Positions come from one scan of the file; every rule and each problem's key are placed exactly."""
    rules = [GOOD.replace('"good"', f'"r{i}"') for i in range(10_000)]
    rules[9_998] = rules[9_998].replace('"weight": 0.5', '"weight": 2')  # line 3 + 9998
    rules[4_321] = "  " + rules[4_321].replace('"uses"', '"frobs"')  # indented: an unknown relation warns
    ruleset = load_rules(write_rules(tmp_path, rules))
    assert len(ruleset.rules) == 9_999
    assert all(ruleset.rule_lines[f"r{i}"] == 3 + i for i in range(10_000) if i != 9_998)
    weight, relation = sorted(ruleset.diagnostics, key=lambda d: -d.line)
    assert (weight.code, weight.line, weight.col) == (
        Code.RULE_WEIGHT_OUT_OF_RANGE,
        10_001,
        rules[9_998].index("2}") + 1,
    )
    assert (relation.code, relation.line, relation.col) == (
        Code.RULE_UNKNOWN_RELATION,
        4_324,
        rules[4_321].index('"frobs"') + 1,
    )
