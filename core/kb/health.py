"""What is wrong with a loaded workspace, in one object every answer can carry.

`ask`, `retrieve` and `eval` print its line on stderr and put it in their JSON, and the explorer
shows its counts in the status line, so a KB file or a rules file with errors is never silent.
"""

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from core.infra.diagnostics import Code, Diagnostic
from core.kb.view import KBView
from core.retrieval.rules import RuleSet

DETAILS_HINT = "mrptui check for details"


class Health(BaseModel):
    """Counts of the workspace's diagnostics by origin, and how many rules are running."""

    model_config = ConfigDict(frozen=True)

    errors: int
    warnings: int
    kb_errors: int
    kb_warnings: int
    rules_errors: int
    rules_warnings: int
    rules_file_valid: bool
    rules_running: int
    rules_declared: int | None
    plugin_errors: int
    summary: str
    files_withdrawn: int = 0  # KB files whose last good units are withdrawn until fixed
    units_withdrawn: int = 0  # the units those files' notes name (0 with files: none named to this caller)
    rules_kept: int = 0  # rules running on their last good version (an edit no longer validates)
    # What the index cache reported (unusable, so running without it; a damaged entry rebuilt):
    # said once per open, however few warnings a summary shows.
    cache_notes: tuple[str, ...] = ()

    @property
    def failed(self) -> bool:
        """Rules or units failed: what the explorer's first-screen banner is for."""
        return self.errors > 0


def count_diagnostics(diagnostics: Sequence[Diagnostic]) -> tuple[int, int]:
    """(errors, warnings): the one count every view of a diagnostics list shows."""
    errors = sum(d.is_error for d in diagnostics)
    return errors, len(diagnostics) - errors


def counts_phrase(errors: int, warnings: int) -> str:
    """ "2 errors, 1 warning", "1 warning", or "no errors"."""
    parts = [plural(errors, "error") if errors else "", plural(warnings, "warning") if warnings else ""]
    return ", ".join(part for part in parts if part) or "no errors"


def plural(count: int, word: str) -> str:
    """ "1 error", "2 errors": a count with its noun, singular for one."""
    return f"{count} {word}" + ("" if count == 1 else "s")


def _rules_part(ruleset: RuleSet, errors: int) -> str | None:
    running = len(ruleset.rules)
    if not ruleset.file_valid:
        last_good = " (the last good one)" if running == 1 else " (the last good ones)" if running else ""
        return f"rules file invalid: running with {plural(running, 'rule')}{last_good}"
    if not errors:
        return None
    declared = ruleset.declared if ruleset.declared is not None else running
    return f"{plural(errors, 'rule error')}: running with {running} of {plural(declared, 'rule')}"


def health_of(kb_diagnostics: Sequence[Diagnostic], ruleset: RuleSet, plugin_problems: Sequence[Diagnostic]) -> Health:
    kb_errors, kb_warnings = count_diagnostics(kb_diagnostics)
    rules_errors, rules_warnings = count_diagnostics(ruleset.diagnostics)
    plugin_errors, plugin_warnings = count_diagnostics(plugin_problems)
    parts = [
        plural(kb_errors, "KB error") if kb_errors else None,
        _rules_part(ruleset, rules_errors),
        plural(plugin_errors, "plugin error") if plugin_errors else None,
    ]
    errors = kb_errors + rules_errors + plugin_errors
    shown = [part for part in parts if part]
    return Health(
        errors=errors,
        warnings=kb_warnings + rules_warnings + plugin_warnings,
        kb_errors=kb_errors,
        kb_warnings=kb_warnings,
        rules_errors=rules_errors,
        rules_warnings=rules_warnings,
        rules_file_valid=ruleset.file_valid,
        rules_running=len(ruleset.rules),
        rules_declared=ruleset.declared,
        plugin_errors=plugin_errors,
        summary=f"{', '.join(shown)} — {DETAILS_HINT}" if shown and errors else "",
        files_withdrawn=sum(d.code is Code.UNITS_WITHDRAWN for d in kb_diagnostics),
        units_withdrawn=sum(d.units for d in kb_diagnostics if d.code is Code.UNITS_WITHDRAWN),
        rules_kept=_rules_kept(ruleset),
        cache_notes=tuple(dict.fromkeys(d.message for d in kb_diagnostics if d.code is Code.INDEX_CACHE)),
    )


def caller_diagnostics(diagnostics: Sequence[Diagnostic], view: KBView) -> list[Diagnostic]:
    """The KB diagnostics a caller's surfaces may count: none marked author-only (about a unit that
    writes a permission field), and none about a file that holds restricted units of which the
    caller's view has none, so that adding, breaking or caching a restricted unit changes nothing
    a caller outside its view can observe (docs/security.md)."""
    hidden = view.hidden_files()
    return [d for d in diagnostics if not d.author_only and d.file not in hidden and not _names_any(d, hidden)]


def _names_any(diagnostic: Diagnostic, files: set[str]) -> bool:
    """An index-cache note is filed under the cache folder and names the KB file in its message."""
    return diagnostic.code is Code.INDEX_CACHE and any(file in diagnostic.message for file in files)


def _rules_kept(ruleset: RuleSet) -> int:
    """Rules running on a last good version: all of them when the file stopped parsing."""
    if not ruleset.file_valid:
        return len(ruleset.rules)
    return sum(d.code is Code.RULES_LAST_GOOD_KEPT for d in ruleset.diagnostics)
