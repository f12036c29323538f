"""Checks over a whole KB that no single file can make: what `mrptui check` adds to the readers'
own diagnostics (empty KB, skipped files, units no question can reach, rules reading relations
no unit states)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from core.cnl import FOLDER_SUFFIXES, SUFFIX_FORMATS
from core.infra.config import HdcConfig
from core.infra.diagnostics import Code, Diagnostic, Severity
from core.kb.knowledge_base import KnowledgeBase, is_ignored_name
from core.kb.walk import printable
from core.retrieval.rules import RuleSet, relation_key
from core.text.tokenizer import tokenize
from core.units import KnowledgeUnit

READ_EXTENSIONS = ", ".join(s for s in SUFFIX_FORMATS if s in FOLDER_SUFFIXES)
# A unit past HDC's default `maxUnitTokens` is encoded from its start only.
LONG_UNIT_TOKENS: int = HdcConfig.model_fields["max_unit_tokens"].default


def _warning(code: Code, message: str, file: str, line: int = 1) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=file, line=line, severity=Severity.WARNING)


def kb_problems(kb: KnowledgeBase, paths: Sequence[Path]) -> list[Diagnostic]:
    """Warnings about the KB as a whole: no units, skipped files, unreachable and over-long units."""
    problems = [*skipped_files(paths), *unit_text_problems(kb.units)]
    if paths and not kb.units:
        where = ", ".join(printable(p) for p in paths)
        problems.append(_warning(Code.EMPTY_KB, _empty_kb_message(kb), where))
    return problems


def _empty_kb_message(kb: KnowledgeBase) -> str:
    """Why the KB is empty: the extensions read when no file was, else what became of the files."""
    if not kb.files:
        return f"the KB has no units (files read: {READ_EXTENSIONS})"
    one = len(kb.files) == 1
    files = f"{len(kb.files)} file{'' if one else 's'} read"
    if any(d.is_error for d in kb.diagnostics):
        return f"the KB has no units: the errors above left none of the {files}"
    return f"the KB has no units: the {files} {'holds' if one else 'hold'} none"


def skipped_files(paths: Iterable[Path]) -> list[Diagnostic]:
    """Files inside KB folders that no reader takes, e.g. `.markdown` or `.text`."""
    problems = []
    for folder in (p for p in paths if os.path.isdir(p)):
        for root, dirs, names in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                suffix = os.path.splitext(name)[1].lower()
                if name.startswith(".") or is_ignored_name(name) or suffix in FOLDER_SUFFIXES:
                    continue
                if suffix in SUFFIX_FORMATS:
                    message = f"skipped: {suffix} files in a folder are read only when named with --kb"
                else:
                    message = f"skipped: {suffix or 'no extension'} files are not read (read: {READ_EXTENSIONS})"
                problems.append(_warning(Code.SKIPPED_FILE, message, printable(Path(root) / name)))
    return problems


def _searchable_text(unit: KnowledgeUnit) -> str:
    parts = (unit.topic, unit.claim, unit.procedure, unit.utility_note, unit.condition)
    return " ".join(part for part in parts if part)


def unit_text_problems(units: Iterable[KnowledgeUnit]) -> list[Diagnostic]:
    """Units whose text has no token left after stopwords (no question's words can match them),
    and units past `LONG_UNIT_TOKENS` tokens."""
    problems = []
    for unit in units:
        count = len(tokenize(_searchable_text(unit)))
        if count and count <= LONG_UNIT_TOKENS:
            continue
        file, line = (unit.location.file, unit.location.line) if unit.location else ("<memory>", 1)
        if count:
            message = (
                f"unit {unit.id} has {count:,} tokens: HDC encodes its first {LONG_UNIT_TOKENS:,} only, and an "
                "answer citing it quotes all of it; split it (a paste that lost its line breaks?)"
            )
            problems.append(_warning(Code.LONG_UNIT, message, file, line))
        else:
            message = f"unit {unit.id} has no searchable word after stopwords: no question can reach it"
            problems.append(_warning(Code.UNREACHABLE_UNIT, message, file, line))
    return problems


def rule_relation_problems(ruleset: RuleSet, units: Iterable[KnowledgeUnit]) -> list[Diagnostic]:
    """Premises reading a relation that no unit states and no rule concludes: they can never match."""
    available = {relation_key(u.relation.value) for u in units if u.relation is not None}
    available |= {rule.then.r for rule in ruleset.rules}
    problems = []
    for rule in ruleset.rules:
        for relation in sorted({p.r for p in rule.when} - available):
            message = f"rule {rule.id} reads relation {relation!r}, which no unit states and no rule concludes"
            problems.append(
                _warning(Code.RULE_RELATION_NOT_IN_KB, message, ruleset.path, ruleset.rule_lines.get(rule.id, 1))
            )
    return problems
