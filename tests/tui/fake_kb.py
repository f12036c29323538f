"""The fake session's KB: its units (one only staff see), diagnostics, rules and plugins."""

from __future__ import annotations

import datetime as dt

from core.infra.diagnostics import Code, Diagnostic
from core.units import Caller, KnowledgeUnit, Relation, Role, SourceLocation

AS_OF = dt.date(2026, 1, 15)
CALLER = Caller(as_of=AS_OF)

U_AIRFLOW = "tools::chunk-001::unit-001"
U_DAG = "tools::chunk-001::unit-002"
U_RETRY = "ops::chunk-001::unit-001"
U_LUIGI = "tools::chunk-002::unit-001"
U_DBT = "tools::chunk-002::unit-002"
U_SECRET = "internal::chunk-001::unit-001"
U_CMP = "ops::chunk-002::unit-001"


def _unit(uid: str, role: Role, topic: str, body: str, file: str, line: int, triple=None, **extra) -> KnowledgeUnit:
    source, chunk, _ = uid.split("::")
    fields = dict(
        id=uid,
        source_id=source,
        chunk_id=chunk,
        role=role,
        topic=topic,
        location=SourceLocation(file=file, line=line),
        **extra,
    )
    if role is Role.PROCEDURE:
        fields["procedure"] = body
    else:
        fields["claim"] = body
    if triple:
        fields.update(subject=triple[0], relation=Relation(triple[1]), object=triple[2])
    return KnowledgeUnit(**fields)


UNITS: list[KnowledgeUnit] = [
    _unit(
        U_RETRY,
        Role.EXPLANATION,
        "Retry handling",
        "Retry handling is relevant for data pipelines.",
        "sample_kb/ops.md",
        3,
        ("retry handling", "relevant_for", "data pipelines"),
    ),
    _unit(
        U_CMP,
        Role.COMPARISON,
        "Airflow versus Luigi",
        "Airflow schedules DAGs; Luigi chains batch tasks.",
        "sample_kb/ops.md",
        12,
    ),
    _unit(
        U_AIRFLOW,
        Role.DEFINITION,
        "Airflow",
        "Airflow uses DAG scheduling.",
        "sample_kb/tools.md",
        3,
        ("airflow", "uses", "dag scheduling"),
    ),
    _unit(
        U_DAG,
        Role.EXPLANATION,
        "DAG scheduling",
        "DAG scheduling provides retry handling.",
        "sample_kb/tools.md",
        11,
        ("dag scheduling", "provides", "retry handling"),
    ),
    _unit(
        U_LUIGI,
        Role.NARRATIVE,
        "Luigi",
        "Luigi is a batch workflow tool first built at Spotify.",
        "sample_kb/tools.md",
        20,
    ),
    _unit(
        U_DBT,
        Role.EXPLANATION,
        "dbt",
        "dbt depends on a warehouse.",
        "sample_kb/tools.md",
        28,
        ("dbt", "depends_on", "warehouse"),
    ),
]
SECRET = _unit(
    U_SECRET,
    Role.CONSTRAINT,
    "Internal SLA",
    "Pipelines must finish by 06:00.",
    "sample_kb/internal.md",
    2,
    acl=("staff",),
)

DIAGNOSTICS: list[Diagnostic] = [
    Diagnostic(
        code=Code.INVALID_ROLE_VALUE,
        message="role 'Explainer' is not one of the 9 roles",
        file="sample_kb/tools.md",
        line=36,
        col=7,
    ),
    Diagnostic(
        code=Code.RULE_UNKNOWN_RELATION,
        message="relation 'enables' is not one of the 11 relations",
        file="config/thinkingdb.json",
        line=41,
        col=9,
    ),
]

RULES: list[dict] = [
    {
        "id": "tool_to_capability",
        "premises": ["?x uses ?y", "?y provides ?z"],
        "conclusion": "?x has_capability ?z",
        "weight": 0.95,
        "file": "config/thinkingdb.json",
        "line": 4,
        "description": "a tool has what it uses provides",
    },
    {
        "id": "capability_to_relevance",
        "premises": ["?x has_capability ?c", "?c relevant_for ?g"],
        "conclusion": "?x relevant_for ?g",
        "weight": 0.90,
        "file": "config/thinkingdb.json",
        "line": 11,
        "description": "a capability's relevance carries over",
    },
    {
        "id": "dependency_transitive",
        "premises": ["?x depends_on ?y", "?y depends_on ?z"],
        "conclusion": "?x depends_on ?z",
        "weight": 0.92,
        "file": "config/thinkingdb.json",
        "line": 18,
        "description": "dependencies chain",
    },
    {
        "id": "causal_chain",
        "premises": ["?x causes ?y", "?y causes ?z"],
        "conclusion": "?x causes ?z",
        "weight": 0.90,
        "file": "config/thinkingdb.json",
        "line": 25,
        "description": "causes chain",
    },
]

PLUGINS: dict[str, list[str]] = {
    "planner": ["planner-default", "planner-depth"],
    "sd": ["sd-symbolic", "sd-llm-fast", "sd-llm-deep"],
    "kb": ["kb-fast", "kb-balanced", "kb-thinkingdb"],
    "gs": ["gs-symbolic", "gs-llm-fast"],
    "val": ["val-grounded", "val-llm"],
}

KB_ORDER = ("kb-fast", "kb-thinkingdb", "kb-balanced")
