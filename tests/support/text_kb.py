"""A session over plain-text files written for a test module, opened once per module."""

from __future__ import annotations

import pytest

from core.kernel.session import Session


def open_texts(factory: pytest.TempPathFactory, name: str, texts: dict[str, str]) -> Session:
    folder = factory.mktemp(name)
    for file_name, text in texts.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return Session.open([folder])
