"""Keep what plugin code prints off the program's stdout (where `ask --json` writes its JSON).

`contextlib.redirect_stdout` swaps `sys.stdout` for the whole process, so a plugin thread's
redirect would also catch (and a racing thread could restore) the main thread's output. Instead,
`sys.stdout` is wrapped once in a proxy that looks at the writing thread: writes from a thread
inside `plugin_output()` go to stderr, every other write goes where it always went.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

_local = threading.local()
_install_lock = threading.Lock()


class _ThreadRoutedStdout:
    """Stands in for `sys.stdout`: plugin threads write to stderr, the rest to the wrapped stream."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def _target(self) -> TextIO:
        return sys.stderr if getattr(_local, "plugin", False) else self._stream

    def write(self, text: str) -> int:
        return self._target().write(text)

    def writelines(self, lines: Iterable[str]) -> None:
        self._target().writelines(lines)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _install() -> None:
    with _install_lock:
        if not isinstance(sys.stdout, _ThreadRoutedStdout) and sys.stdout is not None:
            sys.stdout = _ThreadRoutedStdout(sys.stdout)


@contextmanager
def plugin_output() -> Iterator[None]:
    """Run plugin code (a factory, a plugin call) with its prints sent to stderr."""
    _install()
    previous = getattr(_local, "plugin", False)
    _local.plugin = True
    try:
        yield
    finally:
        _local.plugin = previous
