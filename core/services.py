"""The shared, read-only services a plugin factory receives: configs, rules, indexes, LLM client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.config import EngineConfig, RetrievalConfig
from core.synonyms import Synonyms

if TYPE_CHECKING:
    from core.llm import LlmClient
    from core.retrieval.indexes import IndexCache
    from core.rules import RuleSet


@dataclass(frozen=True)
class Services:
    retrieval: RetrievalConfig
    engine: EngineConfig
    rules: RuleSet
    indexes: IndexCache
    llm: LlmClient
    synonyms: Synonyms = field(default_factory=Synonyms)
