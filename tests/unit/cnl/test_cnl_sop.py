from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.cnl import format_intents, parse_intents, read_sop, read_text
from core.infra.diagnostics import Code
from core.units import Act, Intent, Relation

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "cnl"
DECLARE = '@k1 ku atomic "src::chunk-000::unit-000"\nset $k1 role Explanation\nset $k1 topic "T"\n'


def codes(text: str) -> list[tuple[Code, int, int]]:
    return [(d.code, d.line, d.col) for d in read_sop(text, "kb.cnl")[1]]


def test_reads_units_with_strings_lists_and_triples() -> None:
    units, diagnostics = read_sop((FIXTURES / "units.cnl").read_text(), "units.cnl")
    # A quoted list item keeps its space; no caller can hold such a tag, and the author is told.
    assert [(d.code, d.line, d.severity.value) for d in diagnostics] == [(Code.MALFORMED_LINE, 16, "warning")]
    assert "'legal team'" in diagnostics[0].message
    fact, restricted = units
    assert fact.topic == 'Orion and "data privacy"'
    assert fact.claim == "Orion supports data privacy.\nIt encrypts every record."
    assert (fact.subject, fact.relation, fact.object, fact.confidence) == (
        "Orion",
        Relation.SUPPORTS,
        "data privacy",
        0.9,
    )
    assert fact.utility_acts == (Act.EXPLAIN, Act.DESCRIBE)
    assert restricted.acl == ("support:eu", "legal team")
    assert restricted.region == "EU"
    assert [u.location.line for u in units] == [2, 12]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('set $k1 claim "never closed', (Code.UNTERMINATED_STRING, 4, 15)),
        ("set $k1 claim", (Code.MALFORMED_LINE, 4, 1)),
        ('set $k1 claim "a" extra', (Code.MALFORMED_LINE, 4, 19)),
        ("set $k1 utilityActs [explain", (Code.MALFORMED_LINE, 4, 21)),
        ('set $k1 condition ["a"]', (Code.MALFORMED_LINE, 4, 19)),
        ('set $k1 colour "red"', (Code.UNKNOWN_FIELD, 4, 9)),
        ('set $k1 topic "again"', (Code.DUPLICATE_FIELD, 4, 9)),
    ],
)
def test_a_bad_line_about_a_unit_breaks_that_unit(line: str, expected: tuple[Code, int, int]) -> None:
    text = DECLARE + line + '\nset $k1 claim "C"\n'
    units, diagnostics = read_sop(text, "kb.cnl")
    assert units == []
    assert [(d.code, d.line, d.col) for d in diagnostics][0] == expected


def test_unquoted_words_as_a_value_are_told_to_go_in_quotes() -> None:
    units, diagnostics = read_sop(DECLARE + "set $k1 claim Rails expand in heat\n", "kb.cnl")
    assert units == []
    [problem] = [d for d in diagnostics if d.line == 4]
    assert (problem.code, problem.col) == (Code.MALFORMED_LINE, 21)
    assert problem.message == (
        'expected set $ref field value; several words go in double quotes ("Rails expand in heat"), a list in brackets'
    )


def test_unknown_reference_points_at_the_reference() -> None:
    assert codes(DECLARE + 'set $k1 claim "C"\nset $k9 claim "x"\n') == [(Code.UNKNOWN_REFERENCE, 5, 5)]


def test_unknown_statement_and_unlabelled_declaration_are_malformed() -> None:
    text = DECLARE + 'set $k1 claim "C"\n  frob $k1\nku atomic "src::chunk-000::unit-001"\n'
    assert codes(text) == [(Code.MALFORMED_LINE, 5, 3), (Code.MALFORMED_LINE, 6, 1)]


def test_redeclared_label_is_malformed_and_the_first_unit_stays() -> None:
    text = DECLARE + 'set $k1 claim "C"\n@k1 ku atomic "other"\n'
    units, diagnostics = read_sop(text, "kb.cnl")
    assert [u.id for u in units] == ["src::chunk-000::unit-000"]
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.MALFORMED_LINE, 5, 1)]


def test_validation_codes_come_from_the_shared_validator() -> None:
    text = DECLARE.replace("Explanation", "Wizard") + 'set $k1 claim "C"\n'
    assert codes(text) == [(Code.INVALID_ROLE_VALUE, 2, 14)]


def test_detected_by_leading_at_sign_whatever_the_extension() -> None:
    units, _ = read_text("\n" + DECLARE + 'set $k1 claim "C"\n', "notes.txt")
    assert [u.id for u in units] == ["src::chunk-000::unit-000"]


# --- Intent CNL --------------------------------------------------------------------------------

INTENTS = """```
# two intents
@i1 intent explain "why Orion is relevant for data privacy"
@i2 set $i1 output causal_explanation
@i3 set $i1 context "EU customers"
@i4 constrain $i1 "cite sources"
@i5 constrain $i1 brief
@i6 intent Compare "Orion vs Atlas"
@i7 set $i6 output "a table"
@i8 set $i6 criterion cost
```
"""


def test_parses_several_intents() -> None:
    intents, diagnostics = parse_intents(INTENTS)
    assert diagnostics == []
    assert intents == [
        Intent(
            act=Act.EXPLAIN,
            target="why Orion is relevant for data privacy",
            output="causal_explanation",
            context="EU customers",
            constraints=("cite sources", "brief"),
        ),
        Intent(act=Act.COMPARE, target="Orion vs Atlas", output="a table", criterion="cost"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('@i1 intent juggle "x"\n@i2 set $i1 output y\n', [(Code.INVALID_ACT_VALUE, 1, 12)]),
        ('@i1 intent explain "x"\n', [(Code.MISSING_INTENT_OUTPUT, 1, 1)]),
        ("# nothing to do\n", [(Code.EMPTY_INTENT_DOCUMENT, 1, 1)]),
        ("", [(Code.EMPTY_INTENT_DOCUMENT, 1, 1)]),
        ('@i1 intent explain "x"\n@i2 set $i1 output y z\n', [(Code.MALFORMED_LINE, 2, 22)]),
        ('@i1 intent explain "x"\n@i2 set $i1 output y\n@i3 set $i1 mood calm\n', [(Code.UNKNOWN_FIELD, 3, 13)]),
        ('@i1 intent explain "x\n', [(Code.UNTERMINATED_STRING, 1, 20)]),
    ],
)
def test_intent_errors(text: str, expected: list[tuple[Code, int, int]]) -> None:
    intents, diagnostics = parse_intents(text, file="<sd>")
    assert intents == []
    assert sorted((d.code, d.line, d.col) for d in diagnostics) == sorted(expected)
    assert all(d.file == "<sd>" for d in diagnostics)


def test_unknown_statement_is_malformed_and_keeps_the_intent() -> None:
    intents, diagnostics = parse_intents('@i1 intent explain "x"\n@i2 set $i1 output y\nwhatever $i1\n')
    assert [i.target for i in intents] == ["x"]
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.MALFORMED_LINE, 3, 1)]


def test_a_bad_line_drops_only_its_intent() -> None:
    text = '@i1 intent explain "x"\n@i2 set $i1 output y\n@i3 constrain $i1 [a b]\n@i4 intent define "z"\n@i5 set $i4 output w\n'
    intents, diagnostics = parse_intents(text)
    assert [i.target for i in intents] == ["z"]
    assert [(d.code, d.line, d.col) for d in diagnostics] == [(Code.MALFORMED_LINE, 3, 19)]


def test_format_intents_round_trips() -> None:
    intents, _ = parse_intents(INTENTS)
    assert parse_intents(format_intents(intents)) == (intents, [])


_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1).filter(str.strip)


@given(
    st.lists(
        st.builds(
            Intent,
            act=st.sampled_from(list(Act)),
            target=_text,
            output=_text,
            context=st.none() | _text,
            criterion=st.none() | _text,
            evidence=st.none() | _text,
            constraints=st.lists(_text, max_size=3).map(tuple),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_intents_round_trip(intents: list[Intent]) -> None:
    assert parse_intents(format_intents(intents)) == (intents, [])
