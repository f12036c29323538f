"""Which closure stops name a budget: the format ThinkingDB writes (`budget_reason`) is the one the
events read, and the rules' own reach (maxDepth) is not a budget that cut the answer short."""

from __future__ import annotations

import pytest

from core.kernel.events import ProofsFound
from core.kernel.summary import budget_stops
from core.retrieval.thinkingdb.budget import CANCELLED, FIXPOINT, budget_reason


def proofs(stop: str, plugin: str = "kb-thinkingdb") -> ProofsFound:
    return ProofsFound(plugin=plugin, stop_reason=stop)


@pytest.mark.parametrize("limit", ["maxDerivedFacts", "maxClosureMs", "maxClosureMb"])
def test_a_closure_budget_is_read_back_by_its_name(limit) -> None:
    assert proofs(budget_reason(limit, 64)).budget_stop == f"{limit}=64"


@pytest.mark.parametrize("stop", [FIXPOINT, CANCELLED, budget_reason("maxDepth", 4)])
def test_a_fixpoint_a_cancel_or_the_rules_reach_is_no_budget_stop(stop) -> None:
    assert proofs(stop).budget_stop == ""


def test_each_plugin_and_budget_is_said_once_across_replans() -> None:
    stopped = budget_reason("maxClosureMb", 1024)
    events = [proofs(stopped), proofs(FIXPOINT, "kb-other"), proofs(stopped), proofs(stopped, "kb-other")]
    assert budget_stops(events) == [
        "kb-thinkingdb stopped deriving at maxClosureMb=1024",
        "kb-other stopped deriving at maxClosureMb=1024",
    ]
