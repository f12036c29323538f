"""The explorer's session: the workspace (core.kernel.session) plus "why not", which only the explorer asks.

It lives here rather than on core's Session because why-not reads the answer's support check
(core/answer/whynot_support.py), a layer above the kernel the session belongs to (docs/architecture.md).
"""

from __future__ import annotations

from core.answer.whynot import why_not_asked
from core.kernel.session import Session
from core.units import Caller


class ExplorerSession(Session):
    def why_not(self, unit_id: str, question: str, caller: Caller) -> dict[str, str]:
        return why_not_asked(self, unit_id, question, caller)
