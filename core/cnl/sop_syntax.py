"""The SOP statement syntax, shared by knowledge units (core/cnl/sop.py) and Intent CNL
(core/cnl/intent_cnl.py, DS004).

A statement is `[@label] verb argument...` on one line. Arguments are atoms, `$label`
references, strings in double quotes (escapes for quote, backslash, n, t, r) or lists
`[a "b c"]`. A line whose first non-blank character is `#` is a comment. Lines opening or closing
a Markdown code fence are skipped, since seed detectors often wrap their Intent CNL in one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from core.cnl.source_text import Token, source_lines
from core.infra.diagnostics import Code, Diagnostic, did_you_mean

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
_LETTERS = {char: letter for letter, char in _ESCAPES.items()}
ATOM = re.compile(r"[^\s\"\[\]]+")
_PLAIN_ATOM = re.compile(r"[A-Za-z0-9_][\w.:/+-]*")
MODIFIERS = ("set", "constrain")


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
    atom = ATOM.match(line, pos)
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
            error = error_at(file, exc.code, exc.message, exc.at)
        label = None
        if args and args[0].kind == "atom" and args[0].token.text.startswith("@"):
            label, args = args[0].token, args[1:]
        if error is None and (not args or args[0].kind != "atom"):
            at = args[0].token if args else label
            assert at is not None  # a line without an error has a token: the label, if only that
            error = error_at(file, Code.MALFORMED_LINE, "expected a statement verb", at)
        verb = args[0].token if args and args[0].kind == "atom" else None
        # A line opening with a string has no verb: the string is one of its tokens, which the
        # fail-closed check reads (`"acl: staff"` alone on a line).
        yield Statement(label, verb, tuple(args[1:] if verb is not None else args), error)


def verb_of(statement: Statement) -> Token:
    """The verb of a statement that was tokenised (`error` None): its first argument is an atom."""
    assert statement.verb is not None
    return statement.verb


def error_at(file: str, code: Code, message: str, at: Token) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=file, line=at.line, col=at.col)


class Labels:
    """Declared `@labels` and what they name; a label whose declaration failed maps to None."""

    def __init__(self, file: str):
        self.file = file
        self.declared: dict[str, tuple[Token, object]] = {}

    def declare(self, statement: Statement, value: object, problem: Diagnostic | None) -> list[Diagnostic]:
        """Register the statement's label. A broken declaration is registered too (as None), so
        the lines naming it do not add UNKNOWN_REFERENCE noise."""
        label = statement.label
        if label is None:
            verb = verb_of(statement)
            return [
                problem or error_at(self.file, Code.MALFORMED_LINE, f"'{verb.text}' needs a label such as @k1", verb)
            ]
        name = label.text[1:]
        if name in self.declared:
            first = self.declared[name][0]
            message = f"label {label.text} is already declared on line {first.line}"
            return [d for d in (problem, error_at(self.file, Code.MALFORMED_LINE, message, label)) if d]
        self.declared[name] = (label, value)
        return [problem] if problem else []

    def owner(self, statement: Statement) -> object:
        """What a `set`/`constrain` line is about, if its first argument names a declaration."""
        if statement.verb is None or statement.verb.text not in MODIFIERS or not statement.args:
            return None
        first = statement.args[0]
        entry = self.declared.get(first.token.text[1:]) if first.kind == "ref" else None
        return entry[1] if entry else None

    def check_reference(self, ref: Arg) -> Diagnostic | None:
        if ref.kind != "ref":
            return error_at(self.file, Code.MALFORMED_LINE, "expected a $reference", ref.token)
        if ref.token.text[1:] not in self.declared:
            hint = did_you_mean(ref.token.text, [f"${name}" for name in self.declared])
            return error_at(
                self.file, Code.UNKNOWN_REFERENCE, f"{ref.token.text} is not declared above{hint}", ref.token
            )
        return None


def arity_problem(file: str, statement: Statement, expected: int, usage: str) -> Diagnostic | None:
    args = statement.args
    if len(args) == expected:
        return None
    at = args[expected].token if len(args) > expected else verb_of(statement)
    return error_at(file, Code.MALFORMED_LINE, f"expected {usage}", at)


def value_problem(file: str, value: Arg, allow_list: bool) -> Diagnostic | None:
    if value.kind == "ref" or (value.kind == "list" and not allow_list):
        return error_at(file, Code.MALFORMED_LINE, "expected an atom or a quoted string", value.token)
    return None


def quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    for char, letter in _LETTERS.items():
        escaped = escaped.replace(char, "\\" + letter)
    return f'"{escaped}"'


def atom_or_quoted(text: str) -> str:
    """An atom when it reads back as the same atom, else a quoted string."""
    return text if _PLAIN_ATOM.fullmatch(text) else quote(text)
