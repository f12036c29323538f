"""`mrptui check [PATH]...`: validate KB units and rule files; print `file:line:col: CODE message`."""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from core.diagnostics import Diagnostic
from core.kb import KnowledgeBase
from core.resources import config_dir, sample_kb_dir
from mrptui.commands import UsageError

RULES_FILE_NAME = "thinkingdb.json"
ENGINE_FILE_NAME = "engine.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths", nargs="*", metavar="PATH",
        help="KB files or folders, and rule files (.json); default: the sample KB and the config folder",
    )


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in (args.paths or getattr(args, "kb", None) or [])] or [sample_kb_dir(), config_dir()]
    for path in paths:
        if not (path.exists() or path.is_symlink()):
            raise UsageError(f"no such file or directory: {path}")
    check_rules = _rules_checker()
    rule_files = _rule_files(paths) if check_rules else []
    kb = KnowledgeBase.load([p for p in paths if p not in rule_files])
    rule_problems = {file: check_rules(file) for file in rule_files} if check_rules else {}
    config_problems = _config_problems(paths)
    diagnostics = [
        *kb.diagnostics,
        *(d for problems in rule_problems.values() for d in problems),
        *(d for problems in config_problems.values() for d in problems),
    ]
    for diagnostic in diagnostics:
        print(diagnostic.model_copy(update={"file": _relative(diagnostic.file)}).format())
    print(_summary(kb, {**rule_problems, **config_problems}, diagnostics))
    return 1 if any(d.is_error for d in diagnostics) else 0


def _rules_checker() -> Callable[[Path], list[Diagnostic]] | None:
    # Rule checking belongs to core.rules; without that module, check still validates units.
    try:
        from core.rules import check_rules_file
    except ModuleNotFoundError as exc:
        if exc.name != "core.rules":
            raise
        return None
    return check_rules_file


def _config_problems(paths: list[Path]) -> dict[Path, list[Diagnostic]]:
    """Each named folder holding an engine.json: its configs and the plugins they name."""
    from core.session import check_config_dir

    return {path / ENGINE_FILE_NAME: check_config_dir(path) for path in paths if (path / ENGINE_FILE_NAME).is_file()}


def _rule_files(paths: list[Path]) -> list[Path]:
    """Explicitly named `.json` files, and each named folder's `thinkingdb.json`; other JSON in
    folders (engine, retrieval, llm config, labelled queries) is not checked here."""
    files = []
    for path in paths:
        # lexists, not is_file: a FIFO or folder in the rules file's place is reported, not skipped.
        if path.is_dir() and os.path.lexists(path / RULES_FILE_NAME):
            files.append(path / RULES_FILE_NAME)
        elif not path.is_dir() and path.suffix.lower() == ".json":
            files.append(path)
    return files


def _summary(kb: KnowledgeBase, rule_problems: dict[Path, list[Diagnostic]], diagnostics: list[Diagnostic]) -> str:
    per_file = Counter(unit.location.file for unit in kb.units if unit.location)
    lines = [f"{_relative(str(file))}: {per_file[str(file)]} units" for file in kb.files]
    lines += [
        f"{_relative(str(file))}: {'config' if file.name == ENGINE_FILE_NAME else 'rules'}, {len(problems)} problems"
        for file, problems in rule_problems.items()
    ]
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    files = len(kb.files) + len(rule_problems)
    lines.append(f"total: {len(kb.units)} units in {files} files, {errors} errors, {warnings} warnings")
    return "\n".join(lines)


def _relative(file: str) -> str:
    """`file` relative to the working directory when it lies below it, else unchanged."""
    try:
        relative = os.path.relpath(file)
    except ValueError:
        return file
    return file if relative.startswith("..") else relative
