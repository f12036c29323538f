"""SOP statements: knowledge units (`@k1 ku atomic "<id>"`) and Intent CNL (DS004), one syntax.

A statement is `[@label] verb argument...` on one line. Arguments are atoms, `$label`
references, strings in double quotes (escapes for quote, backslash, n, t, r) or lists
`[a "b c"]`. A line whose first non-blank character is `#` is a comment. Lines opening or closing
a Markdown code fence are skipped, since seed detectors often wrap their Intent CNL in one.
Any problem on a line that names a declared unit or intent (`set $k1 ...`) breaks that unit or
intent, so it is skipped rather than loaded without the field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from core.cnl.permissions import (
    permission_comment,
    permission_heading,
    permission_inline,
    permission_label,
    permission_line,
    unread_message,
)
from core.cnl.validate import Token, UnitDraft, source_lines
from core.infra.diagnostics import Code, Diagnostic, did_you_mean
from core.units import Act, Intent, KnowledgeUnit

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_LETTERS = {char: letter for letter, char in _ESCAPES.items()}
_ATOM = re.compile(r"[^\s\"\[\]]+")
_PLAIN_ATOM = re.compile(r"[A-Za-z0-9_][\w.:/+-]*")
_MODIFIERS = ("set", "constrain")


class Arg(NamedTuple):
    """One statement argument; `kind` is atom, ref, string or list (whose elements are `items`)."""

    kind: str
    token: Token
    items: tuple[Token, ...] = ()


class Statement(NamedTuple):
    """One line. With `error` set, the line could not be tokenised and `args` is what came before."""

    label: Token | None
    verb: Token | None
    args: tuple[Arg, ...]
    error: Diagnostic | None = None


class _LineError(Exception):
    """A line that cannot be tokenised; caught in this module and turned into a Diagnostic."""

    def __init__(self, code: Code, message: str, at: Token):
        super().__init__(message)
        self.code, self.message, self.at = code, message, at


def _tokenize(line: str, number: int, args: list[Arg]) -> None:
    """Append the line's arguments to `args`, so the caller keeps them when a later one fails."""
    pos = 0
    while True:
        while pos < len(line) and line[pos].isspace():
            pos += 1
        if pos >= len(line):
            return
        if line[pos] == "[":
            arg, pos = _read_list(line, number, pos)
        elif line[pos] == '"':
            text, end = _read_string(line, number, pos)
            arg, pos = Arg("string", Token(text, number, pos + 1)), end
        elif line[pos] == "]":
            raise _LineError(Code.MALFORMED_LINE, "']' without a matching '['", Token("]", number, pos + 1))
        else:
            atom = _atom_at(line, pos)
            kind = "ref" if atom.startswith("$") else "atom"
            arg, pos = Arg(kind, Token(atom, number, pos + 1)), pos + len(atom)
        args.append(arg)


def _read_string(line: str, number: int, start: int) -> tuple[str, int]:
    out: list[str] = []
    pos = start + 1
    while pos < len(line):
        char = line[pos]
        if char == '"':
            return "".join(out), pos + 1
        if char == "\\" and pos + 1 < len(line):
            pos += 1
            out.append(_ESCAPES.get(line[pos], line[pos]))
        else:
            out.append(char)
        pos += 1
    raise _LineError(
        Code.UNTERMINATED_STRING, "string is not closed before the end of the line", Token('"', number, start + 1)
    )


def _atom_at(line: str, pos: int) -> str:
    """The atom starting at `line[pos]`, which the tokeniser saw is none of space, quote or bracket."""
    atom = _ATOM.match(line, pos)
    assert atom is not None
    return atom.group()


def _read_list(line: str, number: int, start: int) -> tuple[Arg, int]:
    items: list[Token] = []
    pos = start + 1
    while pos < len(line):
        char = line[pos]
        if char.isspace():
            pos += 1
        elif char == "]":
            return Arg("list", Token("[", number, start + 1), tuple(items)), pos + 1
        elif char == "[":
            raise _LineError(Code.MALFORMED_LINE, "lists cannot be nested", Token("[", number, pos + 1))
        elif char == '"':
            text, end = _read_string(line, number, pos)
            items.append(Token(text, number, pos + 2))  # where the text starts, after the quote
            pos = end
        else:
            atom = _atom_at(line, pos)
            items.append(Token(atom, number, pos + 1))
            pos += len(atom)
    raise _LineError(Code.MALFORMED_LINE, "list is not closed with ']'", Token("[", number, start + 1))


def statements(text: str, file: str) -> Iterator[Statement]:
    """Each statement of a document in order, comments and blank lines skipped."""
    for number, line in enumerate(source_lines(text), start=1):
        # A bad byte replaced before a comment's `#` leaves it a comment (whose words are prose).
        stripped = line.strip().lstrip("\ufffd")
        if not stripped or stripped.startswith(("#", "```")):
            continue
        args: list[Arg] = []
        error = None
        try:
            _tokenize(line, number, args)
        except _LineError as exc:
            error = _error(file, exc.code, exc.message, exc.at)
        label = None
        if args and args[0].kind == "atom" and args[0].token.text.startswith("@"):
            label, args = args[0].token, args[1:]
        if error is None and (not args or args[0].kind != "atom"):
            at = args[0].token if args else label
            assert at is not None  # a line without an error has a token: the label, if only that
            error = _error(file, Code.MALFORMED_LINE, "expected a statement verb", at)
        verb = args[0].token if args and args[0].kind == "atom" else None
        # A line opening with a string has no verb: the string is one of its tokens, which the
        # fail-closed check reads (`"acl: staff"` alone on a line).
        yield Statement(label, verb, tuple(args[1:] if verb is not None else args), error)


def _verb(statement: Statement) -> Token:
    """The verb of a statement that was tokenised (`error` None): its first argument is an atom."""
    assert statement.verb is not None
    return statement.verb


def _error(file: str, code: Code, message: str, at: Token) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=file, line=at.line, col=at.col)


class _Labels:
    """Declared `@labels` and what they name; a label whose declaration failed maps to None."""

    def __init__(self, file: str):
        self.file = file
        self.declared: dict[str, tuple[Token, object]] = {}

    def declare(self, statement: Statement, value: object, problem: Diagnostic | None) -> list[Diagnostic]:
        """Register the statement's label. A broken declaration is registered too (as None), so
        the lines naming it do not add UNKNOWN_REFERENCE noise."""
        label = statement.label
        if label is None:
            verb = _verb(statement)
            return [problem or _error(self.file, Code.MALFORMED_LINE, f"'{verb.text}' needs a label such as @k1", verb)]
        name = label.text[1:]
        if name in self.declared:
            first = self.declared[name][0]
            message = f"label {label.text} is already declared on line {first.line}"
            return [d for d in (problem, _error(self.file, Code.MALFORMED_LINE, message, label)) if d]
        self.declared[name] = (label, value)
        return [problem] if problem else []

    def owner(self, statement: Statement) -> object:
        """What a `set`/`constrain` line is about, if its first argument names a declaration."""
        if statement.verb is None or statement.verb.text not in _MODIFIERS or not statement.args:
            return None
        first = statement.args[0]
        entry = self.declared.get(first.token.text[1:]) if first.kind == "ref" else None
        return entry[1] if entry else None

    def check_reference(self, ref: Arg) -> Diagnostic | None:
        if ref.kind != "ref":
            return _error(self.file, Code.MALFORMED_LINE, "expected a $reference", ref.token)
        if ref.token.text[1:] not in self.declared:
            hint = did_you_mean(ref.token.text, [f"${name}" for name in self.declared])
            return _error(self.file, Code.UNKNOWN_REFERENCE, f"{ref.token.text} is not declared above{hint}", ref.token)
        return None


def _arity(file: str, statement: Statement, expected: int, usage: str) -> Diagnostic | None:
    args = statement.args
    if len(args) == expected:
        return None
    at = args[expected].token if len(args) > expected else _verb(statement)
    return _error(file, Code.MALFORMED_LINE, f"expected {usage}", at)


def _value_problem(file: str, value: Arg, allow_list: bool) -> Diagnostic | None:
    if value.kind == "ref" or (value.kind == "list" and not allow_list):
        return _error(file, Code.MALFORMED_LINE, "expected an atom or a quoted string", value.token)
    return None


# --- knowledge units -------------------------------------------------------------------------


def read_sop(text: str, file: str) -> tuple[list[KnowledgeUnit], list[Diagnostic]]:
    labels = _Labels(file)
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
            name, label, col = hit
            message = unread_message(name, label, where).replace(
                "the unit is withdrawn", "every unit of this file is withdrawn"
            )
            found.append(
                Diagnostic(
                    code=Code.PERMISSION_NOT_READ, message=message, file=file, line=number, col=col, author_only=True
                )
            )
    return found


def _fence_label(line: str) -> tuple[str, str, int] | None:
    """A permission label on a fence line: after the backticks, any token is a label position."""
    at = len(line) - len(line.lstrip().lstrip("`"))
    found = permission_line(line[at:])
    if found is not None:
        return found[0], found[1], at + found[2]
    for match in _ATOM.finditer(line, at):
        if (label := permission_label(match.group().strip(":="))) is not None:
            return match.group(), label, match.start() + 1
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
        return found[1] if found else None
    tokens = arg.items if arg.kind == "list" else (arg.token,)
    return next(filter(None, (permission_label(at.text.strip(":=")) for at in tokens)), None)


def _unit_statement(statement: Statement, labels: _Labels, drafts: list[UnitDraft], file: str) -> list[Diagnostic]:
    verb = _verb(statement)
    if verb.text == "ku":
        return _declare_unit(statement, labels, drafts, file)
    if verb.text == "set":
        problem = _set_unit_field(statement, labels, file)
        return [problem] if problem else []
    return [_error(file, Code.MALFORMED_LINE, f"unknown statement {verb.text!r}; expected ku or set", verb)]


def _declare_unit(statement: Statement, labels: _Labels, drafts: list[UnitDraft], file: str) -> list[Diagnostic]:
    problem = _arity(file, statement, 2, 'ku atomic "<id>"')
    if problem is None and statement.args[0].token.text != "atomic":
        problem = _error(file, Code.MALFORMED_LINE, "expected 'atomic' after ku", statement.args[0].token)
    if problem is None and (statement.args[1].kind not in ("atom", "string") or not statement.args[1].token.text):
        problem = _error(file, Code.MALFORMED_LINE, "expected the unit id", statement.args[1].token)
    draft = UnitDraft(statement.args[1].token, file) if problem is None else None
    written = permission_heading(statement.args[1].token.text) if draft is not None else None
    if draft is not None and written is not None:
        name, label, col = written
        at = statement.args[1].token
        draft.diagnose(
            Code.PERMISSION_NOT_READ, unread_message(name, label, "in the unit id"), Token(name, at.line, at.col + col)
        )
    problems = labels.declare(statement, draft, problem)
    if draft is not None and not problems:
        drafts.append(draft)
    return problems


def _set_unit_field(statement: Statement, labels: _Labels, file: str) -> Diagnostic | None:
    problem = _arity(file, statement, 3, "set $ref field value") or labels.check_reference(statement.args[0])
    if problem is not None:
        return problem
    _, name, value = statement.args
    draft = labels.owner(statement)
    if not isinstance(draft, UnitDraft):
        return None if draft is None else _error(file, Code.MALFORMED_LINE, "not a unit", statement.args[0].token)
    if name.kind != "atom":
        return _error(file, Code.MALFORMED_LINE, "expected a field name", name.token)
    problem = _value_problem(file, value, allow_list=True)
    if problem is None and value.kind == "list":
        draft.add_items(name.token, value.items, value.token)
    elif problem is None:
        # A string's text starts after its quote: positions inside it count from there.
        at = value.token._replace(col=value.token.col + 1) if value.kind == "string" else value.token
        draft.add_text(name.token, [at])
    return problem


# --- intents ---------------------------------------------------------------------------------

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
    labels = _Labels(file)
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
                _error(file, Code.MISSING_INTENT_OUTPUT, "intent has no `set $ref output ...`", draft.at)
            )
        else:
            intents.append(draft.build())
    if not seen_intent:
        diagnostics.append(
            Diagnostic(code=Code.EMPTY_INTENT_DOCUMENT, message="the document declares no intent", file=file)
        )
    diagnostics.sort(key=lambda d: (d.line, d.col))
    return intents, diagnostics


def _intent_statement(statement: Statement, labels: _Labels, drafts: list[_IntentDraft], file: str) -> list[Diagnostic]:
    verb = _verb(statement)
    if verb.text == "intent":
        return _declare_intent(statement, labels, drafts, file)
    if verb.text in _MODIFIERS:
        problem = _modify_intent(statement, labels, file)
        return [problem] if problem else []
    return [
        _error(file, Code.MALFORMED_LINE, f"unknown statement {verb.text!r}; expected intent, set or constrain", verb)
    ]


def _declare_intent(statement: Statement, labels: _Labels, drafts: list[_IntentDraft], file: str) -> list[Diagnostic]:
    problem = _arity(file, statement, 2, 'intent <act> "<target>"')
    draft: _IntentDraft | None = None
    if problem is None:
        act, target = statement.args
        if act.kind != "atom" or act.token.text.lower() not in _ACTS:
            problem = _error(
                file,
                Code.INVALID_ACT_VALUE,
                f"invalid act {act.token.text!r}: expected {', '.join(Act)}{did_you_mean(act.token.text, Act)}",
                act.token,
            )
        elif target.kind not in ("atom", "string") or not target.token.text.strip():
            problem = _error(file, Code.MALFORMED_LINE, "expected the intent's target text", target.token)
        else:
            draft = _IntentDraft(Act(act.token.text.lower()), target.token.text, statement.label or _verb(statement))
    problems = labels.declare(statement, draft, problem)
    if draft is not None and not problems:
        drafts.append(draft)
    return problems


def _modify_intent(statement: Statement, labels: _Labels, file: str) -> Diagnostic | None:
    is_set = _verb(statement).text == "set"
    usage = "set $ref output|context|criterion|evidence value" if is_set else "constrain $ref value"
    problem = _arity(file, statement, 3 if is_set else 2, usage) or labels.check_reference(statement.args[0])
    if problem is not None:
        return problem
    draft = labels.owner(statement)
    if not isinstance(draft, _IntentDraft):
        return None if draft is None else _error(file, Code.MALFORMED_LINE, "not an intent", statement.args[0].token)
    value = statement.args[-1]
    problem = _value_problem(file, value, allow_list=False)
    if problem is not None or not is_set:
        if problem is None:
            draft.constraints.append(value.token.text)
        return problem
    name = statement.args[1].token
    key = name.text.lower()
    if key not in _INTENT_FIELDS:
        expected = ", ".join(_INTENT_FIELDS)
        hint = did_you_mean(name.text, _INTENT_FIELDS)
        return _error(file, Code.UNKNOWN_FIELD, f"unknown intent field {name.text!r}; expected {expected}{hint}", name)
    if key in draft.fields:
        return _error(file, Code.DUPLICATE_FIELD, f"{key} is already set on line {draft.fields[key][1].line}", name)
    draft.fields[key] = (value.token.text, name)
    return None


def format_intents(intents: Iterable[Intent]) -> str:
    """Intent CNL for `intents`; `parse_intents` reads it back to the same intents."""
    lines: list[str] = []
    for intent in intents:
        ref = f"i{len(lines) + 1}"
        body = [f"intent {intent.act.value} {quote(intent.target)}", f"set ${ref} output {_value(intent.output)}"]
        body += [
            f"set ${ref} {key} {quote(getattr(intent, key))}"
            for key in _INTENT_FIELDS[1:]
            if getattr(intent, key) is not None
        ]
        body += [f"constrain ${ref} {_value(constraint)}" for constraint in intent.constraints]
        start = len(lines) + 1
        lines += [f"@i{start + n} {statement}" for n, statement in enumerate(body)]
    return "\n".join(lines) + "\n"


def quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    for char, letter in _LETTERS.items():
        escaped = escaped.replace(char, "\\" + letter)
    return f'"{escaped}"'


def _value(text: str) -> str:
    """An atom when it reads back as the same atom, else a quoted string."""
    return text if _PLAIN_ATOM.fullmatch(text) else quote(text)
