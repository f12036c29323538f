"""SOP knowledge units: `@k1 ku atomic "<id>"` and `set $k1 field value` statements
(core/cnl/sop_syntax.py). Any problem on a line that names a declared unit (`set $k1 ...`) breaks
that unit, so it is skipped rather than loaded without the field; a permission field that reaches
no unit withdraws every unit of the file.
"""

from __future__ import annotations

from core.cnl.permission_finding import LabelFinding
from core.cnl.permission_inline import permission_heading, permission_inline
from core.cnl.permission_names import permission_label
from core.cnl.permissions import permission_comment, permission_line, unread_message
from core.cnl.sop_syntax import (
    ATOM,
    Arg,
    Labels,
    Statement,
    arity_problem,
    error_at,
    statements,
    value_problem,
    verb_of,
)
from core.cnl.source_text import Token, source_lines
from core.cnl.validate import UnitDraft
from core.infra.diagnostics import Code, Diagnostic
from core.units import KnowledgeUnit


def read_sop(text: str, file: str) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    labels = Labels(file)
    drafts: list[UnitDraft] = []
    # A permission statement that names no unit of this file could have been meant for any, and
    # so could a permission field written in a comment.
    diagnostics: list[Diagnostic] = _commented_permissions(text, file)
    whole_file = bool(diagnostics)
    for statement in statements(text, file):
        problems = [statement.error] if statement.error else _unit_statement(statement, labels, drafts, file)
        owner = labels.owner(statement)
        if isinstance(owner, UnitDraft):
            owner.record(problems)
            continue
        unread = [_unread_permission(statement, problem, file) if problem.is_error else None for problem in problems]
        whole_file = whole_file or any(unread)
        diagnostics.extend(new or old for new, old in zip(unread, problems))
    units = []
    for draft in drafts:
        unit, problems = draft.build()
        diagnostics.extend(problems)
        if unit is not None and not whole_file:
            units.append(unit)
    diagnostics.sort(key=lambda d: (d.line, d.col))
    return units, diagnostics


def _commented_permissions(text: str, file: str) -> list[Diagnostic]:
    """An error for each comment line written as a permission field (`# Acl: staff`, `# - Region = EU`)
    and each code-fence line carrying one (```` ```acl staff ````): neither is read, so the
    restriction it states would be dropped."""
    if "#" not in text and "`" not in text and "\u202e" not in text:
        return []
    found = []
    for number, line in enumerate(source_lines(text), start=1):
        stripped = line.lstrip().lstrip("\ufffd")
        if "\u202e" in line and not stripped.startswith(("#", "```")):
            # Shown reversed (U+202E): a line that reads as a field line on screen is one.
            hit, where = permission_line(line), "on a line shown right to left"
        elif stripped.startswith("#"):
            # A field line, or an unambiguous name with its value after a leading word (`# note:
            # acl: staff`); a comment that talks about permissions in English stays a comment.
            hit, where = permission_comment(line) or permission_inline(line), "in a comment"
        elif stripped.startswith("```"):
            hit, where = _fence_label(line), "on a code-fence line"
        else:
            continue
        if hit is not None:
            message = unread_message(hit.name, hit.label, where).replace(
                "the unit is withdrawn", "every unit of this file is withdrawn"
            )
            found.append(
                Diagnostic(
                    code=Code.PERMISSION_NOT_READ,
                    message=message,
                    file=file,
                    line=number,
                    col=hit.column,
                    author_only=True,
                )
            )
    return found


def _fence_label(line: str) -> LabelFinding | None:
    """A permission label on a fence line: after the backticks, any token is a label position."""
    at = len(line) - len(line.lstrip().lstrip("`"))
    found = permission_line(line[at:])
    if found is not None:
        return found.moved(at)
    for match in ATOM.finditer(line, at):
        if (label := permission_label(match.group().strip(":="))) is not None:
            return LabelFinding(match.group(), label, match.start() + 1, "code-fence token", "name")
    return None


def _unread_permission(statement: Statement, problem: Diagnostic, file: str) -> Diagnostic | None:
    """`problem` extended when its broken statement writes a permission field that reaches no unit
    (an unknown verb, a leading `-`, `//` or `TODO`, a misspelt `$label`): the statement could have
    been meant for any unit of the file, so it withdraws them all. Every token of a statement is a
    label position; a string is running text."""
    label = next(filter(None, (_token_label(arg) for arg in _statement_args(statement))), None)
    if label is None:
        return None
    message = (
        f"{problem.message}; the line writes a permission field ({label}) that reaches no unit, so every "
        "unit of this file is withdrawn until this is fixed (fail closed)"
    )
    return problem.model_copy(update={"message": message, "author_only": True})


def _statement_args(statement: Statement) -> list[Arg]:
    head = [Arg("atom", at) for at in (statement.label, statement.verb) if at is not None]
    return [*head, *statement.args]


def _token_label(arg: Arg) -> str | None:
    if arg.kind == "string":
        found = permission_line(arg.token.text) or permission_inline(arg.token.text)
        return found.label if found else None
    tokens = arg.items if arg.kind == "list" else (arg.token,)
    return next(filter(None, (permission_label(at.text.strip(":=")) for at in tokens)), None)


def _unit_statement(statement: Statement, labels: Labels, drafts: list[UnitDraft], file: str) -> list[Diagnostic]:
    verb = verb_of(statement)
    if verb.text == "ku":
        return _declare_unit(statement, labels, drafts, file)
    if verb.text == "set":
        problem = _set_unit_field(statement, labels, file)
        return [problem] if problem else []
    return [error_at(file, Code.MALFORMED_LINE, f"unknown statement {verb.text!r}; expected ku or set", verb)]


def _declare_unit(statement: Statement, labels: Labels, drafts: list[UnitDraft], file: str) -> list[Diagnostic]:
    problem = arity_problem(file, statement, 2, 'ku atomic "<id>"')
    if problem is None and statement.args[0].token.text != "atomic":
        problem = error_at(file, Code.MALFORMED_LINE, "expected 'atomic' after ku", statement.args[0].token)
    if problem is None and (statement.args[1].kind not in ("atom", "string") or not statement.args[1].token.text):
        problem = error_at(file, Code.MALFORMED_LINE, "expected the unit id", statement.args[1].token)
    draft = UnitDraft(statement.args[1].token, file) if problem is None else None
    written = permission_heading(statement.args[1].token.text) if draft is not None else None
    if draft is not None and written is not None:
        at = statement.args[1].token
        draft.diagnose(
            Code.PERMISSION_NOT_READ,
            unread_message(written.name, written.label, "in the unit id"),
            Token(written.name, at.line, at.col + written.column),
        )
    problems = labels.declare(statement, draft, problem)
    if draft is not None and not problems:
        drafts.append(draft)
    return problems


def _unquoted_words(statement: Statement, file: str) -> Diagnostic | None:
    """`set $k1 claim Rails expand in heat`: words after the value, which a new author writes for
    text; "expected set $ref field value" alone does not say the text wants quotes."""
    words = statement.args[2:]
    if len(words) < 2 or any(word.kind != "atom" for word in words):
        return None
    text = " ".join(word.token.text for word in words)
    message = f'expected set $ref field value; several words go in double quotes ("{text}"), a list in brackets'
    return error_at(file, Code.MALFORMED_LINE, message, words[1].token)


def _set_unit_field(statement: Statement, labels: Labels, file: str) -> Diagnostic | None:
    problem = _unquoted_words(statement, file) or arity_problem(file, statement, 3, "set $ref field value")
    problem = problem or labels.check_reference(statement.args[0])
    if problem is not None:
        return problem
    _, name, value = statement.args
    draft = labels.owner(statement)
    if not isinstance(draft, UnitDraft):
        return None if draft is None else error_at(file, Code.MALFORMED_LINE, "not a unit", statement.args[0].token)
    if name.kind != "atom":
        return error_at(file, Code.MALFORMED_LINE, "expected a field name", name.token)
    problem = value_problem(file, value, allow_list=True)
    if problem is None and value.kind == "list":
        draft.add_items(name.token, value.items, value.token)
    elif problem is None:
        # A string's text starts after its quote: positions inside it count from there.
        at = value.token._replace(col=value.token.col + 1) if value.kind == "string" else value.token
        draft.add_text(name.token, [at])
    return problem
