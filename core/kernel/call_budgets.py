"""The budgets one plugin call runs under, and what the trace says when one of them stops it.

Each call gets a `CancelToken` whose deadline is `pluginTimeoutMs` or what is left of the request
(`requestTimeoutMs`, also the token's hard deadline, which a paused index build still obeys).
While the kernel waits for a call it also watches the process's memory: past
`maxRequestMemoryMb` above what the process held when the request started, the running call's
token is cancelled (a plugin polls it; core/infra/cancel.py) and the reason names the budget. Threads
of calls abandoned at a deadline are told the run ended and waited for, briefly, when it does.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.infra.cancel import CancelToken
from core.infra.config import Budgets
from core.kernel.events import ShardTiming

if TYPE_CHECKING:
    from core.kernel.calls import PluginCall

MEMORY_BUDGET = "maxRequestMemoryMb"
# How long the end of a run waits, in all, for abandoned plugin threads to see their token.
ABANDONED_JOIN_S = 1.0


def call_token(budgets: Budgets, request_deadline: float) -> tuple[CancelToken, str]:
    """This call's token and the reason an attempt it stops gets: the plugin timeout, or what is
    left of the request if that is sooner."""
    request = f"requestTimeoutMs ({budgets.request_timeout_ms} ms)"
    plugin_deadline = time.monotonic() + budgets.plugin_timeout_ms / 1000
    if request_deadline < plugin_deadline:
        return CancelToken(request_deadline, request, request_deadline, request), out_of_time(budgets)
    token = CancelToken(plugin_deadline, f"pluginTimeoutMs ({budgets.plugin_timeout_ms} ms)", request_deadline, request)
    return token, f"cancelled: timed out after {budgets.plugin_timeout_ms} ms (pluginTimeoutMs)"


def out_of_time(budgets: Budgets) -> str:
    return f"cancelled: the request ran out of time ({budgets.request_timeout_ms} ms, requestTimeoutMs)"


def stopped_reason(token: CancelToken, budgets: Budgets, timeout_reason: str) -> str:
    """The reason of an attempt its token stopped, naming the budget that did."""
    if token.reason.startswith(token.hard_budget):  # the request's deadline (during a pause, too)
        return out_of_time(budgets)
    if token.reason.startswith(MEMORY_BUDGET):
        return f"cancelled: {token.reason}"
    return timeout_reason


def uncharged(token: CancelToken) -> str:
    """What the trace says of time a call spent on work not its own (core/infra/cancel.py `paused`)."""
    if not token.paused_for:
        return ""
    what = ", ".join(dict.fromkeys(token.paused_for))
    return f"{what}: {token.paused_s * 1000:,.0f} ms, not charged to pluginTimeoutMs"


def shard_timings(token: CancelToken) -> tuple[ShardTiming, ...]:
    """The shards a call searched on a cluster (core/infra/cancel.py `note_shards`), 1-based."""
    missing = token.shards_missing
    return tuple(
        ShardTiming(
            shard=shard + 1,
            of=token.shard_count,
            ms=round(token.shard_ms.get(shard, 0.0), 3),
            answered=shard not in missing,
        )
        for shard in range(token.shard_count)
    )


def private_bytes() -> int | None:
    """This process's resident memory now, less file-backed pages (Linux /proc/self/statm:
    resident − shared), or None where unknown. Pages of the mapped index cache are the page
    cache's, reclaimable, and not what a runaway allocation grows."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            fields = statm.read().split()
        return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@dataclass
class RequestGuard:
    """One request's memory budget, and the plugin threads it abandoned."""

    limit_mb: int
    baseline: int | None = field(default_factory=private_bytes)
    abandoned: list[tuple[PluginCall, CancelToken]] = field(default_factory=list)
    _charged: int = 0

    def over_budget(self, token: CancelToken) -> str:
        """Why the call running under `token` must stop ("" while within budget). What a paused
        call grows (a view's index build, core/infra/cancel.py) is the view's, not charged."""
        now = private_bytes()
        if self.baseline is None or now is None:
            return ""
        if token.is_paused:
            self.baseline = now - self._charged
            return ""
        self._charged = max(0, now - self.baseline)
        if self._charged <= self.limit_mb << 20:
            return ""
        grown = self._charged >> 20
        return f"{MEMORY_BUDGET} ({self.limit_mb} MB) passed: the process grew {grown:,} MB during this request"

    def abandon(self, thread: PluginCall, token: CancelToken) -> None:
        self.abandoned.append((thread, token))

    def finish(self) -> None:
        """The run is over: every abandoned call is told so, and given ABANDONED_JOIN_S in all to stop."""
        deadline = time.monotonic() + ABANDONED_JOIN_S
        for thread, token in self.abandoned:
            token.cancel("the run ended")
            thread.join(max(0.0, deadline - time.monotonic()))
        self.abandoned = [(thread, token) for thread, token in self.abandoned if thread.is_alive()]
