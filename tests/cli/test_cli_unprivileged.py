"""What a user whom file modes bind meets (the suite runs as root, which they never bind; the
child is held to them: tests/support/unprivileged.py): an unreadable file or folder in the KB, an
unwritable or unlistable index cache, a read-only or unreadable conversation file. Each is a
clear line with its path, never a traceback, and no file is lost or changed. What a test only
sets up (a cache to refuse, a conversation to protect) is made in this process, as root."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from mrptui.cli import main
from tests.support.store_kb import write_kb
from tests.support.unprivileged import run_cli

QUESTION = "when is the neap tide at the harbour bar"


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    write_kb(tmp_path / "kb", files=3, per_file=10)
    return tmp_path / "kb"


def digests(folder: Path) -> dict[str, str]:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_unreadable_file_and_folder_are_errors_with_their_paths_and_the_rest_loads(kb, tmp_path) -> None:
    hidden = kb / "notes1.md"
    locked = kb / "locked"
    locked.mkdir()
    (locked / "inside.md").write_text((kb / "notes2.md").read_text(encoding="utf-8"), encoding="utf-8")
    hidden.chmod(0)
    locked.chmod(0)
    try:
        checked = run_cli("--cache-dir", str(tmp_path / "cache"), "check", str(kb))
        asked = run_cli("--cache-dir", str(tmp_path / "cache"), "--kb", str(kb), "ask", QUESTION, "--json")
    finally:
        locked.chmod(0o700)
        hidden.chmod(0o600)
    assert checked.returncode == 1 and "Traceback" not in checked.stderr, checked.stderr
    assert f"{hidden}:1:1: FILE_UNREADABLE Permission denied" in checked.stdout.splitlines()
    assert (
        f"{locked}:1:1: FILE_UNREADABLE folder cannot be read (Permission denied); the files in it are not loaded"
        in checked.stdout.splitlines()
    )
    assert f"{kb / 'notes0.md'}: 10 units" in checked.stdout.splitlines()
    assert asked.returncode == 0 and "Traceback" not in asked.stderr, asked.stderr
    assert json.loads(asked.stdout)["status"] and "2 KB errors" in asked.stderr


def test_an_unwritable_cache_is_one_warning_with_its_path_and_is_left_as_it_was(kb, tmp_path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o500)
    try:
        asked = run_cli("--cache-dir", str(cache), "--kb", str(kb), "ask", QUESTION)
    finally:
        cache.chmod(0o700)
    assert asked.returncode == 0 and "Traceback" not in asked.stderr, asked.stderr
    assert any(line.startswith("status: ") for line in asked.stdout.splitlines())
    assert f"cannot write the index cache at {cache} (Permission denied); running without it" in asked.stderr
    assert list(cache.iterdir()) == []


def test_cache_info_on_a_cache_it_cannot_list_says_so_instead_of_an_empty_cache(kb, tmp_path) -> None:
    cache = tmp_path / "cache"
    assert main(["--cache-dir", str(cache), "--kb", str(kb), "check"]) == 0
    before = digests(cache)
    (cache / "segments").chmod(0)
    try:
        info = run_cli("--cache-dir", str(cache), "cache", "info")
    finally:
        (cache / "segments").chmod(0o700)
    assert info.returncode == 2 and "Traceback" not in info.stderr
    assert info.stderr == f"mrptui: error: cannot read the index cache at {cache / 'segments'}: Permission denied\n"
    assert "0 cached file(s)" not in info.stdout and digests(cache) == before


@pytest.mark.parametrize(("mode", "said"), [(0o400, "memory not saved"), (0o000, "memory not read")])
def test_a_read_only_or_unreadable_conversation_is_a_warning_with_its_path_and_kept_byte_for_byte(
    kb, tmp_path, monkeypatch, mode, said
) -> None:
    memory = {"MRPTUI_MEMORY_DIR": str(tmp_path / "memory")}
    options = ["--cache-dir", str(tmp_path / "cache"), "--kb", str(kb)]
    monkeypatch.setenv("MRPTUI_MEMORY_DIR", memory["MRPTUI_MEMORY_DIR"])
    assert main([*options, "ask", QUESTION, "--session", "tides"]) == 0
    [conversation] = (tmp_path / "memory").rglob("conversation-tides.jsonl")
    before = digests(tmp_path / "memory")
    conversation.chmod(mode)
    try:
        asked = run_cli(*options, "ask", "And the spring tide?", "--session", "tides", env=memory)
    finally:
        conversation.chmod(0o600)
    assert asked.returncode == 0 and "Traceback" not in asked.stderr, asked.stderr
    assert asked.stderr.startswith(f"mrptui: warning: {said}: {conversation}: ")
    assert f"(mode {mode:04o})" in asked.stderr
    assert digests(tmp_path / "memory") == before


def test_the_child_is_held_to_file_modes(tmp_path) -> None:
    """The other tests here would pass vacuously in a child that reads anything."""
    secret = tmp_path / "secret.md"
    secret.write_text("## Context Unit s::chunk-000::unit-000\nRole: Definition\nTopic: T\nClaim: C.\n")
    secret.chmod(0)
    try:
        done = run_cli("check", str(secret))
    finally:
        secret.chmod(0o600)
    assert done.returncode == 1 and "FILE_UNREADABLE" in done.stdout
    assert os.geteuid() != 0 or secret.read_text().startswith("## Context Unit")  # this process still reads it
