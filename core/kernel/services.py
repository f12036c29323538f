"""The shared, read-only services a plugin factory receives: configs, rules, indexes, LLM client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.infra.config import EngineConfig, RetrievalConfig
from core.text.synonyms import Synonyms

if TYPE_CHECKING:
    from core.infra.llm import LlmClient
    from core.kb.indexes import IndexCache
    from core.retrieval.rules import RuleSet


@dataclass(frozen=True)
class Services:
    """What every plugin of a run reads and no plugin owns: configs, rules, indexes, the LLM client
    and the synonyms."""

    retrieval: RetrievalConfig
    engine: EngineConfig
    rules: RuleSet
    indexes: IndexCache
    llm: LlmClient
    synonyms: Synonyms = field(default_factory=Synonyms)
