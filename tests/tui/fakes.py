"""A scripted stand-in for `core.kernel.session.Session` (`FakeSession`), over the fake KB
(fake_kb.py) and the scripted runs (fake_runs.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from fake_kb import DIAGNOSTICS, PLUGINS, RULES, SECRET, UNITS
from fake_runs import events_for, thinkingdb_run
from fake_scores import FAKE_RETRIEVAL

from core.infra.config import RetrievalConfig
from core.infra.diagnostics import Diagnostic
from core.kb.health import Health, health_of
from core.kernel.contract import Request
from core.kernel.events import RunStarted
from core.retrieval.rules import RuleSet
from core.units import Caller, KnowledgeUnit


class FakeSession:
    """Implements the Session interface the explorer uses, from the canned scripts of fake_runs.py."""

    def __init__(
        self, *, diagnostics: list[Diagnostic] | None = None, retrieval: RetrievalConfig = FAKE_RETRIEVAL
    ) -> None:
        self.retrieval = retrieval
        self.requests: list[Request] = []
        self.warmed: list[Caller] = []
        self.tags_warmed: list[Caller] = []
        self.version = 1
        self.reloads = 0
        self._diagnostics = list(DIAGNOSTICS if diagnostics is None else diagnostics)
        self.why_not_calls: list[tuple[str, str]] = []
        self.costly: frozenset[str] = frozenset()
        # Paths standing for KB files: exports and traces must refuse them.
        self.kb_files: set[Path] = set()

    def run(self, request: Request, steering=None) -> Iterator:
        self.requests.append(request)
        version = self.view_version(request.caller)
        if request.question.lower().startswith("boom"):
            yield from thinkingdb_run(request)[:3]
            raise RuntimeError("engine exploded on purpose")
        for event in events_for(request):
            yield event.model_copy(update={"kb_version": version}) if isinstance(event, RunStarted) else event

    def unit(self, unit_id: str, caller: Caller) -> KnowledgeUnit | None:
        for unit in self.units(caller):
            if unit.id == unit_id:
                return unit
        return None

    def view_version(self, caller: Caller) -> str:
        """Every `touch` stands for a save that changed what the caller sees."""
        return "kb-7f3a" if self.version == 1 else f"kb-7f3a.{self.version}"

    def units(self, caller: Caller) -> list[KnowledgeUnit]:
        units = list(UNITS)
        if "staff" in caller.tags:
            units.append(SECRET)
        return sorted(units, key=lambda u: u.id)

    def diagnostics(self) -> list[Diagnostic]:
        return list(self._diagnostics)

    def health(self, caller: Caller | None = None) -> Health:
        # The fake has no rule file: every canned diagnostic counts as a KB one, and none is
        # author-only, so every caller counts them all.
        return health_of(self._diagnostics, RuleSet(), [])

    def rules(self) -> list[dict]:
        return [dict(rule) for rule in RULES]

    def why_not(self, unit_id: str, question: str, caller: Caller) -> dict[str, str]:
        self.why_not_calls.append((unit_id, question))
        return {
            "visibility": "visible to this caller",
            "bm25": "no shared terms with the question",
            "kb-balanced": "cut by gap: 0.21 < 0.35 × top 0.80",
            "thinkingdb": "no proof reaches this unit",
            "support": "best sentence covers 0 of 2 focus terms: “Luigi is a batch workflow tool that chains "
            "tasks into pipelines.”; does not say: relevant, data",
        }

    def reload(self) -> list[Diagnostic]:
        self.reloads += 1
        return self.diagnostics()

    def fingerprint(self) -> str:
        return f"v{self.version}"

    def owns_file(self, path: Path) -> bool:
        return Path(path).resolve() in self.kb_files

    def warm_up(self, caller: Caller) -> None:
        self.warmed.append(caller)

    def hdc_ready(self, caller: Caller) -> bool:
        return True

    def warm_up_hdc(self, caller: Caller) -> None:
        raise AssertionError("the explorer builds HDC only when the session says it is not ready")

    def warm_up_tags(self, caller: Caller, cancelled=lambda: False, busy=lambda: False, pause=lambda: None) -> int:
        self.tags_warmed.append(caller)
        self.tags_busy = busy
        return 0

    def touch(self, diagnostics: list[Diagnostic] | None = None) -> None:
        """Simulate a saved KB file: a new fingerprint (and optionally new diagnostics)."""
        self.version += 1
        if diagnostics is not None:
            self._diagnostics = list(diagnostics)

    def costly_plugins(self) -> frozenset[str]:
        return self.costly

    def plugin_ids(self) -> dict[str, list[str]]:
        return {stage: list(ids) for stage, ids in PLUGINS.items()}
