"""The KB as a coordinator that opened only its shards' manifest holds it: the files' stat digest
(the version that names the shard folder), the manifest's unit counts and diagnostics, and
callers' views whose every answer comes from the shards (remote_view.py). No unit, column or
segment of the KB is read here, so the coordinator's memory does not grow with the KB."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from core.infra.diagnostics import Diagnostic
from core.kb.knowledge_base import holds
from core.kb.sharding.remote_view import RemoteView
from core.kb.sharding.sharded_view import Shards
from core.kb.sharding.shards import ShardError, ShardManifest
from core.store import SegmentStore
from core.units import Caller, CallerKey

# Callers' views kept (as many as a KB keeps views).
_VIEWS_KEPT = 8


class ManifestKb:
    """What a `Session` reads of its KB, from the shards' manifest and the shards."""

    def __init__(
        self,
        paths: Sequence[Path],
        files: Sequence[Path],
        version: str,
        manifest: ShardManifest,
        shards: Shards,
        store: SegmentStore | None = None,
    ):
        self.paths = tuple(paths)
        self.files = tuple(files)
        self.version = version
        self.unit_count = sum(manifest.units)
        self.diagnostics: tuple[Diagnostic, ...] = manifest.diagnostics
        self.store = store  # the index cache the command names (its folder keeps the tagger's data)
        self._shards = shards
        self._views: OrderedDict[CallerKey, RemoteView] = OrderedDict()
        self._lock = threading.Lock()

    def view(self, caller: Caller) -> RemoteView:
        """The caller's view, answered by the shards (each applies it before answering)."""
        with self._lock:
            found = self._views.get(caller.key)
            if found is None:
                found = self._views[caller.key] = RemoteView.of(self._shards, self.version, caller)
                while len(self._views) > _VIEWS_KEPT:
                    self._views.popitem(last=False)
            self._views.move_to_end(caller.key)
            return found

    def holds(self, path: Path) -> bool:
        """Whether `path` is a KB file, or would be read as one (`KnowledgeBase.holds`)."""
        return holds(self.paths, self.files, path)

    def fingerprint(self) -> str:
        from core.kb.knowledge_base import KnowledgeBase

        return KnowledgeBase.fingerprint_of(self.paths)

    def reload(self) -> NoReturn:
        raise ShardError("a coordinator that opened only its shards' manifest is not reloaded: run the command again")

    rebuilt = reload
