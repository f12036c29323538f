"""Intent CNL (DS004): `@i1 intent <act> "<target>"`, `set $i1 output|context|criterion|evidence
value` and `constrain $i1 value` statements in the SOP syntax (core/cnl/sop_syntax.py). Any
problem on a line that names a declared intent breaks that intent, so it is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable

from core.cnl.sop_syntax import (
    MODIFIERS,
    Labels,
    Statement,
    arity_problem,
    atom_or_quoted,
    error_at,
    quote,
    statements,
    value_problem,
    verb_of,
)
from core.cnl.source_text import Token
from core.infra.diagnostics import Code, Diagnostic, did_you_mean
from core.units import Act, Intent

_INTENT_FIELDS = ("output", "context", "criterion", "evidence")
_ACTS = frozenset(act.value for act in Act)


class _IntentDraft:
    def __init__(self, act: Act, target: str, at: Token):
        self.act, self.target, self.at = act, target, at
        self.fields: dict[str, tuple[str, Token]] = {}
        self.constraints: list[str] = []
        self.broken = False

    def record(self, problems: list[Diagnostic]) -> None:
        self.broken = self.broken or any(problem.is_error for problem in problems)

    def build(self) -> Intent:
        values = {key: text for key, (text, _) in self.fields.items()}
        return Intent(act=self.act, target=self.target, constraints=tuple(self.constraints), **values)


def parse_intents(text: str, file: str = "<intent>") -> tuple[list[Intent], list[Diagnostic]]:
    """Intents of an Intent CNL document, in order; one without `output` or with a bad line is dropped."""
    labels = Labels(file)
    drafts: list[_IntentDraft] = []
    diagnostics: list[Diagnostic] = []
    seen_intent = False
    for statement in statements(text, file):
        seen_intent = seen_intent or (statement.verb is not None and statement.verb.text == "intent")
        problems = [statement.error] if statement.error else _intent_statement(statement, labels, drafts, file)
        owner = labels.owner(statement)
        if isinstance(owner, _IntentDraft):
            owner.record(problems)
        diagnostics.extend(problems)
    intents = []
    for draft in drafts:
        # A broken intent's own line error already says why it is dropped.
        if draft.broken:
            continue
        if "output" not in draft.fields:
            diagnostics.append(
                error_at(file, Code.MISSING_INTENT_OUTPUT, "intent has no `set $ref output ...`", draft.at)
            )
        else:
            intents.append(draft.build())
    if not seen_intent:
        diagnostics.append(
            Diagnostic(code=Code.EMPTY_INTENT_DOCUMENT, message="the document declares no intent", file=file)
        )
    diagnostics.sort(key=lambda d: (d.line, d.col))
    return intents, diagnostics


def _intent_statement(statement: Statement, labels: Labels, drafts: list[_IntentDraft], file: str) -> list[Diagnostic]:
    verb = verb_of(statement)
    if verb.text == "intent":
        return _declare_intent(statement, labels, drafts, file)
    if verb.text in MODIFIERS:
        problem = _modify_intent(statement, labels, file)
        return [problem] if problem else []
    return [
        error_at(file, Code.MALFORMED_LINE, f"unknown statement {verb.text!r}; expected intent, set or constrain", verb)
    ]


def _declare_intent(statement: Statement, labels: Labels, drafts: list[_IntentDraft], file: str) -> list[Diagnostic]:
    problem = arity_problem(file, statement, 2, 'intent <act> "<target>"')
    draft: _IntentDraft | None = None
    if problem is None:
        act, target = statement.args
        if act.kind != "atom" or act.token.text.lower() not in _ACTS:
            problem = error_at(
                file,
                Code.INVALID_ACT_VALUE,
                f"invalid act {act.token.text!r}: expected {', '.join(Act)}{did_you_mean(act.token.text, Act)}",
                act.token,
            )
        elif target.kind not in ("atom", "string") or not target.token.text.strip():
            problem = error_at(file, Code.MALFORMED_LINE, "expected the intent's target text", target.token)
        else:
            draft = _IntentDraft(Act(act.token.text.lower()), target.token.text, statement.label or verb_of(statement))
    problems = labels.declare(statement, draft, problem)
    if draft is not None and not problems:
        drafts.append(draft)
    return problems


def _modify_intent(statement: Statement, labels: Labels, file: str) -> Diagnostic | None:
    is_set = verb_of(statement).text == "set"
    usage = "set $ref output|context|criterion|evidence value" if is_set else "constrain $ref value"
    problem = arity_problem(file, statement, 3 if is_set else 2, usage) or labels.check_reference(statement.args[0])
    if problem is not None:
        return problem
    draft = labels.owner(statement)
    if not isinstance(draft, _IntentDraft):
        return None if draft is None else error_at(file, Code.MALFORMED_LINE, "not an intent", statement.args[0].token)
    value = statement.args[-1]
    problem = value_problem(file, value, allow_list=False)
    if problem is not None or not is_set:
        if problem is None:
            draft.constraints.append(value.token.text)
        return problem
    name = statement.args[1].token
    key = name.text.lower()
    if key not in _INTENT_FIELDS:
        expected = ", ".join(_INTENT_FIELDS)
        hint = did_you_mean(name.text, _INTENT_FIELDS)
        return error_at(
            file, Code.UNKNOWN_FIELD, f"unknown intent field {name.text!r}; expected {expected}{hint}", name
        )
    if key in draft.fields:
        return error_at(file, Code.DUPLICATE_FIELD, f"{key} is already set on line {draft.fields[key][1].line}", name)
    draft.fields[key] = (value.token.text, name)
    return None


def format_intents(intents: Iterable[Intent]) -> str:
    """Intent CNL for `intents`; `parse_intents` reads it back to the same intents."""
    lines: list[str] = []
    for intent in intents:
        ref = f"i{len(lines) + 1}"
        body = [
            f"intent {intent.act.value} {quote(intent.target)}",
            f"set ${ref} output {atom_or_quoted(intent.output)}",
        ]
        body += [
            f"set ${ref} {key} {quote(getattr(intent, key))}"
            for key in _INTENT_FIELDS[1:]
            if getattr(intent, key) is not None
        ]
        body += [f"constrain ${ref} {atom_or_quoted(constraint)}" for constraint in intent.constraints]
        start = len(lines) + 1
        lines += [f"@i{start + n} {statement}" for n, statement in enumerate(body)]
    return "\n".join(lines) + "\n"
