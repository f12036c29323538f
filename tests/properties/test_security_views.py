"""Leak 1 of issue 14: two callers must never share one cached view or index.

The caches used to key on a string that joined tags with "," and fields with "|", so a caller
holding the single tag "merchant:vip-ops,support:eu" got the key of a caller holding both tags.
"""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from core.answer.whynot import why_not_asked
from core.kb.knowledge_base import KnowledgeBase
from core.kernel.contract import Request
from core.kernel.events import AnswerReady, to_json_line
from core.kernel.session import Session
from core.units import Caller, KnowledgeUnit, Role

AS_OF = dt.date(2026, 5, 1)
SECRET = "vault combination 4471"
JOINED_TAG = "merchant:vip-ops,support:eu"


def unit(uid: str, claim: str, **fields) -> KnowledgeUnit:
    source, chunk = uid.split("::")[0], "::".join(uid.split("::")[:2])
    return KnowledgeUnit(
        id=uid, source_id=source, chunk_id=chunk, role=Role.DEFINITION, topic="Greenhouse vault", claim=claim, **fields
    )


def greenhouse_kb() -> KnowledgeBase:
    return KnowledgeBase.from_units(
        [
            unit("greenhouse::chunk-000::unit-000", "The greenhouse vault stores seed samples at four degrees."),
            unit(
                "greenhouse::chunk-000::unit-001",
                f"The greenhouse vault opens with the {SECRET}.",
                acl=("merchant:vip-ops",),
            ),
            unit(
                "greenhouse::chunk-000::unit-002",
                "Seed samples leave the greenhouse vault on Mondays.",
                acl=("support:eu",),
            ),
        ]
    )


def privileged() -> Caller:
    return Caller(tags=frozenset({"merchant:vip-ops", "support:eu"}), as_of=AS_OF)


def joined() -> Caller:
    """The attacker's caller, as an embedding program that skips validation would build it."""
    return Caller.model_construct(tags=frozenset({JOINED_TAG}), region=None, as_of=AS_OF)


def test_a_joined_tag_never_gets_the_view_of_a_caller_holding_both_tags() -> None:
    kb = greenhouse_kb()
    assert "greenhouse::chunk-000::unit-001" in kb.view(privileged())
    view = kb.view(joined())
    assert [u.id for u in view.units] == ["greenhouse::chunk-000::unit-000"]
    assert view.key != kb.view(privileged()).key


def test_asking_after_a_privileged_caller_in_one_process_shows_no_restricted_text() -> None:
    session = Session.from_kb(greenhouse_kb())
    question = "How does the greenhouse vault open?"
    first = list(session.run(Request(question=question, caller=privileged())))
    assert SECRET in next(e for e in first if isinstance(e, AnswerReady)).answer
    second = list(session.run(Request(question=question, caller=joined())))
    text = "\n".join(to_json_line(e) for e in second)
    assert SECRET not in text
    assert "greenhouse::chunk-000::unit-001" not in text
    reasons = why_not_asked(session, "greenhouse::chunk-000::unit-001", question, joined())
    assert SECRET not in str(reasons) and "visible to this caller" not in str(reasons)


@pytest.mark.parametrize(
    "tag",
    [JOINED_TAG, "a|b", "a b", "tab\tx", "zero\u200bwidth", "bidi\u202etag", "ctl\x07", "", "ｍerchant:vip-ops"],
)
def test_caller_tags_are_validated_at_the_boundary(tag: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Caller(tags=frozenset({tag}))
    assert "tag" in str(caught.value)


def test_a_well_formed_caller_keeps_its_tags_and_key() -> None:
    caller = Caller(tags=frozenset({"merchant:vip-ops", "staff:icu"}), region="EU", as_of=AS_OF)
    assert caller.key == (frozenset({"merchant:vip-ops", "staff:icu"}), "EU", AS_OF)
    assert Caller(tags=frozenset({"staff:icu", "merchant:vip-ops"}), region="EU", as_of=AS_OF).key == caller.key


@pytest.mark.parametrize("tags", ["merchant:vip-ops|support:eu", "staff icu", "zero\u200bwidth", "ｓtaff"])
def test_the_cli_refuses_a_bad_caller_tag_with_a_usage_error(capsys, tags: str) -> None:
    from mrptui.cli import main

    code = main(["retrieve", "vault", "--caller-tags", tags, "--json"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("mrptui: error: --caller-tags/--region:") and "Traceback" not in err


def test_a_queries_file_with_a_bad_caller_tag_names_its_line(tmp_path) -> None:
    from core.eval.labelled import load_queries
    from core.infra.config import ConfigError

    path = tmp_path / "queries.json"
    path.write_text(
        '[\n {"id": "q1", "question": "Vault?", "expect_evidence": [], "must_not_appear": [],\n'
        '  "caller": {"tags": ["merchant:vip-ops,support:eu"]}}\n]\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_queries(path)
    (problem,) = caught.value.diagnostics
    assert problem.line == 3 and "separator" in problem.message


@pytest.mark.parametrize("before", [True, False])
def test_caller_flags_count_before_or_after_the_subcommand(capsys, before: bool) -> None:
    import json

    from mrptui.cli import main

    flags = ["--caller-tags", "merchant:vip-ops", "--region", "EU", "--as-of", "2026-05-27"]
    command = ["retrieve", "VIP-RPL-1 immediate refund", "--kb-plugin", "kb-fast", "--json"]
    assert main([*flags, *command] if before else [*command, *flags]) == 0
    ids = [c["id"] for c in json.loads(capsys.readouterr().out)["candidates"]]
    assert "merchant-vip-terms::chunk-000::unit-000" in ids
