"""The session seam the app talks to (`SessionLike`), with `NullSession` for replaying a saved trace
when no KB is open, and how a caller is described on screen."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from core.infra.config import RetrievalConfig
from core.infra.diagnostics import Diagnostic
from core.kb.health import Health
from core.kernel.contract import Request
from core.kernel.events import Event
from core.kernel.steering import Steering
from core.units import Caller, KnowledgeUnit


class SessionLike(Protocol):
    """What the explorer needs from `core.kernel.session.Session`, and all it may touch."""

    retrieval: RetrievalConfig | None
    """The retrieval configuration runs are scored with (fusion weights, bonus, method, role boost)."""

    def run(self, request: Request, steering: Steering | None = None) -> Iterator[Event]: ...

    def costly_plugins(self) -> frozenset[str]: ...

    def unit(self, unit_id: str, caller: Caller) -> KnowledgeUnit | None: ...

    def view_version(self, caller: Caller) -> str | None: ...

    def units(self, caller: Caller) -> list[KnowledgeUnit]: ...

    def diagnostics(self) -> list[Diagnostic]: ...

    def health(self, caller: Caller | None = None) -> Health | None: ...

    def rules(self) -> list[dict]: ...

    def why_not(self, unit_id: str, question: str, caller: Caller) -> dict[str, str]: ...

    def reload(self) -> list[Diagnostic]: ...

    def fingerprint(self) -> str: ...

    def owns_file(self, path: Path) -> bool: ...

    def warm_up(self, caller: Caller) -> None: ...

    def hdc_ready(self, caller: Caller) -> bool: ...

    def warm_up_hdc(self, caller: Caller) -> None: ...

    def warm_up_tags(
        self,
        caller: Caller,
        cancelled: Callable[[], bool] = ...,
        busy: Callable[[], bool] = ...,
        pause: Callable[[], object] = ...,
    ) -> int: ...

    def plugin_ids(self) -> dict[str, list[str]]: ...


@dataclass
class NullSession:
    """A session with no KB and no engine: replaying a saved trace on its own, or the explorer
    while its KB loads (or after it failed to)."""

    reason: str = "this is a replayed trace; no KB is open"
    retrieval: RetrievalConfig | None = None
    _units: list[KnowledgeUnit] = field(default_factory=list)
    problems: tuple[Diagnostic, ...] = ()  # why no KB is open, when opening it failed

    def run(self, request: Request, steering: Steering | None = None) -> Iterator[Event]:
        raise RuntimeError(self.reason)

    def costly_plugins(self) -> frozenset[str]:
        return frozenset()

    def unit(self, unit_id: str, caller: Caller) -> KnowledgeUnit | None:
        return None

    def view_version(self, caller: Caller) -> str | None:
        return None  # no view: nothing recorded may be checked against one

    def units(self, caller: Caller) -> list[KnowledgeUnit]:
        return []

    def diagnostics(self) -> list[Diagnostic]:
        return list(self.problems)

    def health(self, caller: Caller | None = None) -> Health | None:
        return None

    def rules(self) -> list[dict]:
        return []

    def why_not(self, unit_id: str, question: str, caller: Caller) -> dict[str, str]:
        return {}

    def reload(self) -> list[Diagnostic]:
        return []

    def fingerprint(self) -> str:
        return ""

    def owns_file(self, path: Path) -> bool:
        return False

    def warm_up(self, caller: Caller) -> None:
        return None

    def hdc_ready(self, caller: Caller) -> bool:
        return True

    def warm_up_hdc(self, caller: Caller) -> None:
        return None

    def warm_up_tags(
        self,
        caller: Caller,
        cancelled: Callable[[], bool] = lambda: False,
        busy: Callable[[], bool] = lambda: False,
        pause: Callable[[], object] = lambda: None,
    ) -> int:
        return 0

    def plugin_ids(self) -> dict[str, list[str]]:
        return {}


def describe_caller(tags: Iterable[str], region: str | None, as_of: str) -> str:
    """ "public caller as of …" or "caller a,b in EU as of …", for a caller or a trace's record of one."""
    tags = sorted(tags)
    who = "caller " + ",".join(tags) if tags else "public caller"
    if region:
        who += f" in {region}"
    return f"{who} as of {as_of}"


def caller_phrase(caller: Caller) -> str:
    """ "public caller as of 2026-05-27", "caller a,b in EU as of 2026-05-27"."""
    return describe_caller(caller.tags, caller.region, caller.as_of.isoformat())
