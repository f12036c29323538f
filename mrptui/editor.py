"""Which command opens a file at a line in the user's editor (`e` on the KB, rules and unit windows).

Editors disagree on how to say "at line N": vi-style editors take `+N file`, VS Code `-g file:N`,
Sublime and Helix `file:N`, JetBrains IDEs `--line N file`. The command is built as an argv list
(never a shell string, so a path with spaces or quotes stays one argument), from, in order:

1. `$MRPTUI_EDITOR`, a template with the placeholders `{file}` and `{line}`, e.g.
   `myeditor --goto {file}:{line}` (split like a shell line; `{{` and `}}` are literal braces;
   without `{file}` the file is appended);
2. `$VISUAL`, then `$EDITOR`: the program (with any options, e.g. `code --wait`) followed by the
   line syntax its name is known to take (`EDITOR_LINE_SYNTAX`). An editor not in the table gets
   the file only (a `+N` it does not understand would open a second file named `+N`).
"""

from __future__ import annotations

import os
import shlex
import string
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import PurePath

TEMPLATE_VARIABLE = "MRPTUI_EDITOR"
PLACEHOLDERS = ("file", "line")

# How each editor takes a line, as a template of the arguments after the program and its options.
PLUS_LINE = "+{line} {file}"
FILE_COLON_LINE = "{file}:{line}"
EDITOR_LINE_SYNTAX: dict[str, str] = {
    **dict.fromkeys(("vi", "vim", "nvim", "gvim", "mvim", "view", "elvis", "nvi", "ex"), PLUS_LINE),
    **dict.fromkeys(
        (
            "nano",
            "pico",
            "rnano",
            "emacs",
            "emacsclient",
            "xemacs",
            "jed",
            "joe",
            "jmacs",
            "jstar",
            "jpico",
            "mcedit",
            "ne",
            "micro",
            "kak",
            "gedit",
            "mousepad",
            "vis",
            "amp",
        ),
        PLUS_LINE,
    ),
    **dict.fromkeys(("code", "code-insiders", "codium", "vscodium", "cursor", "windsurf"), "-g {file}:{line}"),
    **dict.fromkeys(("subl", "sublime_text", "hx", "helix", "zed", "zeditor", "lapce"), FILE_COLON_LINE),
    **dict.fromkeys(
        ("idea", "pycharm", "charm", "webstorm", "goland", "clion", "rubymine", "phpstorm", "rider", "studio"),
        "--line {line} {file}",
    ),
    **dict.fromkeys(("kate", "kwrite"), "--line {line} {file}"),
    "mate": "-l {line} {file}",
    "gnome-text-editor": "+{line} {file}",
}


class EditorError(ValueError):
    """No editor is configured, or its template cannot be used; the message says what to set."""


@dataclass(frozen=True)
class EditorCommand:
    """The command that opens a file at a line in the user's editor."""

    argv: list[str]
    note: str = ""  # said to the user when the line could not be passed


def editor_command(file: str, line: int, environ: Mapping[str, str] | None = None) -> EditorCommand:
    """The argv that opens `file` at `line`, from `$MRPTUI_EDITOR`, `$VISUAL` or `$EDITOR`."""
    env = os.environ if environ is None else environ
    line = max(1, int(line))
    if file.startswith(("-", "+")):  # never read as an option or a line number
        file = f"./{file}"
    template = env.get(TEMPLATE_VARIABLE, "").strip()
    if template:
        return EditorCommand(fill_template(template, file, line, source=f"${TEMPLATE_VARIABLE}"))
    editor = (env.get("VISUAL") or env.get("EDITOR") or "").strip()
    if not editor:
        raise EditorError(
            f"set $EDITOR (e.g. export EDITOR=vim) or ${TEMPLATE_VARIABLE} "
            "(e.g. 'myeditor {file}:{line}') to open files from here"
        )
    program = _split(editor, "$VISUAL" if env.get("VISUAL") else "$EDITOR")
    syntax = EDITOR_LINE_SYNTAX.get(editor_name(program[0]))
    if syntax is None:
        note = (
            f"opened {PurePath(file).name} without its line: {program[0]}'s line syntax is not known; "
            f"set {TEMPLATE_VARIABLE}, e.g. '{program[0]} {{file}}:{{line}}'"
        )
        return EditorCommand([*program, file], note)
    return EditorCommand([*program, *fill_template(syntax, file, line, source="the editor table")])


def editor_name(program: str) -> str:
    """The editor a program path names: `/usr/bin/vim.basic` → vim, `Code.exe` → code."""
    name = PurePath(program).name.lower()
    for suffix in (".exe", ".cmd", ".bat", ".sh", ".app"):
        name = name.removesuffix(suffix)
    return name.split(".")[0]  # Debian's vim.basic, vim.tiny


def fill_template(template: str, file: str, line: int, *, source: str) -> list[str]:
    """Split `template` like a shell line, then put `file` and `line` into each word. Values are
    inserted after splitting, so a file name is always one argument whatever it contains."""
    words = [_parse(word, source) for word in _split(template, source)]
    values = {"file": file, "line": str(line)}
    filled = ["".join(literal + (values[field] if field else "") for literal, field in word) for word in words]
    if not any(field == "file" for word in words for _, field in word):
        filled.append(file)
    return filled


def _split(text: str, source: str) -> list[str]:
    try:
        words = shlex.split(text)
    except ValueError as exc:  # an unclosed quote
        raise EditorError(f"{source} cannot be split into words ({exc}): {text!r}") from None
    if not words:
        raise EditorError(f"{source} is empty")
    return words


def _parse(word: str, source: str) -> list[tuple[str, str]]:
    """A word as (literal text, placeholder or "") pieces; anything but a bare {file} or {line} is
    refused, so a template never reaches into Python's format mini-language."""
    try:
        parsed = list(string.Formatter().parse(word))
    except ValueError as exc:  # a lone { or }
        raise EditorError(f"{source}: {exc} in {word!r} (write {{{{ and }}}} for literal braces)") from None
    pieces = []
    for literal, field, spec, conversion in parsed:
        if field is not None and (field not in PLACEHOLDERS or spec or conversion):
            raise EditorError(f"{source}: unknown placeholder in {word!r}; use {{file}} and {{line}}")
        pieces.append((literal, field or ""))
    return pieces


def open_in_editor(app, file: str, line: int, changed: Callable[[], None]) -> None:
    """Suspend `app` (a Textual app) and run the editor at `file`:`line`, then call `changed` to look
    for changes; a missing editor, a bad template or a terminal that cannot suspend is a notification."""
    try:
        command = editor_command(file, line)
    except EditorError as exc:
        app.notify(str(exc), severity="warning", timeout=10)
        return
    try:
        with app.suspend():
            subprocess.run(command.argv, check=False)
    except Exception as exc:  # noqa: BLE001 - SuspendNotSupported, a missing editor binary, …
        app.notify(f"could not open the editor ({command.argv[0]}): {exc or type(exc).__name__}", severity="error")
        return
    if command.note:
        app.notify(command.note, severity="warning", timeout=10)
    changed()
