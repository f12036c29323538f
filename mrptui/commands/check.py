"""`mrptui check [PATH]...`: validate everything it is given and print `file:line:col: CODE message`.

KB files and folders: every unit, plus whole-KB warnings (empty KB, skipped files, units no
question can reach). Config folders and `.json` files: engine, retrieval, llm and keymap through
their pydantic models, a queries.json as labelled queries, rules (thinkingdb.json or any other
.json) rule by rule and against the KB's relations. `--against QUERIES.json`: labelled ids that no unit has any more.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from core.eval.labelled import load_queries, stale_labels
from core.infra.config import (
    ConfigError,
    EngineConfig,
    KbBudgets,
    OverBudget,
    RetrievalConfig,
    load_retrieval_config,
    validated,
)
from core.infra.diagnostics import Code, Diagnostic
from core.infra.llm import LlmConfig
from core.infra.resources import BUNDLED_DEFAULTS, config_dir, sample_kb_dir
from core.kb.checks import kb_problems, rule_relation_problems
from core.kb.health import plural
from core.kb.knowledge_base import KnowledgeBase
from core.kb.sharding.config import ClusterConfig
from core.retrieval.rules import RuleSet, load_rules
from core.text.synonyms import Synonyms
from core.text.synonyms import load as load_synonyms
from mrptui.commands import UsageError, add_kb_option, cache_store, config_from_args, unreachable

RULES_FILE_NAME = "thinkingdb.json"
ENGINE_FILE_NAME = "engine.json"
KEYMAP_FILE_NAME = "keymap.json"
QUERIES_FILE_NAME = "queries.json"
CONFIG_MODELS = {
    "engine.json": EngineConfig,
    "retrieval.json": RetrievalConfig,
    "llm.json": LlmConfig,
    "cluster.json": ClusterConfig,  # optional: --cluster's defaults (core/kb/sharding/config.py)
}
CONFIG_FILE_NAMES = frozenset({*CONFIG_MODELS, RULES_FILE_NAME, KEYMAP_FILE_NAME})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="KB files or folders, config folders and .json files; default: the sample KB and the config folder",
    )
    parser.add_argument("--against", metavar="QUERIES.json", help="also report labelled ids no unit has")
    parser.add_argument("--config", metavar="DIR", default=argparse.SUPPRESS, help="a config folder to check too")
    # `--kb` as every other command takes it: an author types `mrptui check --kb my_kb` too.
    add_kb_option(parser)


def run(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in [*args.paths, *(getattr(args, "kb", None) or [])]] or [sample_kb_dir(), config_dir()]
    config = config_from_args(args)
    if config is not None and config not in paths:
        paths.append(config)
    for path in paths:
        if (why := unreachable(path)) is not None:
            raise UsageError(f"{why}: {path}")
    config_files = _config_files(paths)
    kb_paths = [p for p in paths if p not in config_files and not _is_config_folder(p)]
    try:
        kb = KnowledgeBase.load(kb_paths, cache_store(args), budgets=_budgets(config_files, config))
    except OverBudget as refused:  # a KB past a whole-KB budget is checked no further, as it is never opened
        for diagnostic in refused.diagnostics:
            print(diagnostic.model_copy(update={"file": _relative(diagnostic.file)}).format())
        return 1
    synonyms, synonym_problems = load_synonyms(kb_paths)
    file_problems: dict[Path, list[Diagnostic]] = {}
    for file in config_files:
        file_problems[file] = _checker(file)(file, kb)
    diagnostics = [*kb.diagnostics, *synonym_problems, *kb_problems(kb, kb_paths)]
    diagnostics += [d for problems in file_problems.values() for d in problems]
    if args.against:
        diagnostics += _against(Path(args.against), kb)
    for diagnostic in diagnostics:
        print(diagnostic.model_copy(update={"file": _relative(diagnostic.file)}).format())
    print(_summary(kb, synonyms, file_problems, diagnostics, [p for p in paths if _is_config_folder(p)]))
    return 1 if any(d.is_error for d in diagnostics) else 0


def _is_config_folder(path: Path) -> bool:
    # lexists, not is_file: a FIFO or folder in a config file's place is reported, not skipped.
    return path.is_dir() and any(os.path.lexists(path / name) for name in CONFIG_FILE_NAMES)


def _config_files(paths: list[Path]) -> list[Path]:
    """Each config folder's known .json files, and every explicitly named .json file."""
    files = []
    for path in paths:
        if _is_config_folder(path):
            files += [path / name for name in sorted(CONFIG_FILE_NAMES) if os.path.lexists(path / name)]
        elif not path.is_dir() and path.suffix.lower() == ".json":
            files.append(path)
    return files


def _budgets(config_files: list[Path], config: Path | None) -> KbBudgets:
    """The whole-KB budgets the KB opens under: those of a retrieval.json being checked, else of
    the config folder the other commands would read. A file that does not validate leaves the
    defaults, and its own check reports it."""
    named = [file for file in config_files if file.name == "retrieval.json"]
    try:
        return (validated(RetrievalConfig, named[-1]) if named else load_retrieval_config(config)).inputs
    except ConfigError:
        return KbBudgets()


def _checker(file: Path) -> Callable[[Path, KnowledgeBase], list[Diagnostic]]:
    """By file name: a config model, the keymap, else a rules file (e.g. a copy of thinkingdb.json)."""
    if file.name == ENGINE_FILE_NAME:
        return lambda path, _kb: _engine_problems(path)
    model = CONFIG_MODELS.get(file.name)
    if model is not None:
        return lambda path, _kb: _model_problems(model, path)
    if file.name == KEYMAP_FILE_NAME:
        return lambda path, _kb: _keymap_problems(path)
    if file.name == QUERIES_FILE_NAME:
        return _against
    return _rules_problems


def _model_problems(model, path: Path) -> list[Diagnostic]:
    try:
        validated(model, path)
    except ConfigError as exc:
        return list(exc.diagnostics)
    return []


def _engine_problems(path: Path) -> list[Diagnostic]:
    """engine.json through its model, then the plugins it names (factories that fail, unknown ids
    in planner orders) once the folder's configs load; the other files report their own problems."""
    from core.kernel.session import check_config_dir

    return [d for d in check_config_dir(path.parent) if Path(d.file) == path]


def _keymap_problems(path: Path) -> list[Diagnostic]:
    from core.infra.config import json_pointer_line
    from mrptui.keymap import read_keymap  # the keymap is the explorer's; Textual loads only here

    _keymap, problems = read_keymap(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    diagnostics = []
    for problem in problems:
        message = problem.removeprefix(f"{path}: ")
        key = message.split(":", 1)[0].strip().strip("'")
        line = json_pointer_line(text, (key,)) if f'"{key}"' in text else 1
        diagnostics.append(Diagnostic(code=Code.INVALID_CONFIG, message=message, file=str(path), line=line))
    return diagnostics


def _rules_problems(path: Path, kb: KnowledgeBase) -> list[Diagnostic]:
    ruleset: RuleSet = load_rules(path)
    problems = list(ruleset.diagnostics)
    if kb.units:
        problems += rule_relation_problems(ruleset, kb.units)
    return problems


def _against(path: Path, kb: KnowledgeBase) -> list[Diagnostic]:
    if not path.is_file():
        raise UsageError(f"--against: no such file: {path}")
    try:
        queries = load_queries(path)
    except ConfigError as exc:
        return list(exc.diagnostics)
    return stale_labels(path, queries, {unit.id for unit in kb.units})


def _summary(
    kb: KnowledgeBase,
    synonyms: Synonyms,
    file_problems: dict[Path, list[Diagnostic]],
    diagnostics: list[Diagnostic],
    folders: list[Path],
) -> str:
    per_file = Counter(unit.location.file for unit in kb.units if unit.location)
    lines = [f"{_relative(str(file))}: {plural(per_file[str(file)], 'unit')}" for file in kb.files]
    rules_per_file = Counter(rule.file for rule in synonyms.rules)
    lines += [
        f"{_relative(str(file))}: synonyms, {plural(rules_per_file[str(file)], 'rule')}" for file in synonyms.files
    ]
    lines += [
        f"{_relative(str(file))}: {_kind(file)}, {plural(len(problems), 'problem')}"
        for file, problems in file_problems.items()
    ]
    lines += _bundled(folders)
    errors = sum(d.is_error for d in diagnostics)
    warnings = len(diagnostics) - errors
    files = len(kb.files) + len(synonyms.files) + len(file_problems)
    lines.append(
        f"total: {plural(len(kb.units), 'unit')} in {plural(files, 'file')}, {plural(errors, 'error')}, "
        f"{plural(warnings, 'warning')}"
    )
    return "\n".join(lines)


def _bundled(folders: list[Path]) -> list[str]:
    """What each config folder leaves to the bundled config, as the engine will run it."""
    lines = []
    for folder in folders:
        missing = [name for name in BUNDLED_DEFAULTS if not os.path.lexists(folder / name)]
        if missing:
            lines.append(f"{_relative(str(folder))}: {', '.join(missing)} from the bundled config")
    return lines


def _kind(file: Path) -> str:
    if file.name in CONFIG_MODELS or file.name == KEYMAP_FILE_NAME:
        return "config"
    return "labelled queries" if file.name == QUERIES_FILE_NAME else "rules"


def _relative(file: str) -> str:
    """`file` relative to the working directory when it lies below it, else unchanged."""
    try:
        relative = os.path.relpath(file)
    except ValueError:
        return file
    return file if relative.startswith("..") else relative
