"""Text from an LLM reply never reaches the terminal with its control characters: `ask` and
`ask --step` print ESC sequences, OSC titles, BEL, NUL, other C0/C1 controls and bidi overrides
as visible `\\uXXXX` escapes. A real OpenAI-compatible server on 127.0.0.1 plays the replies."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mrptui.terminal_text import terminal_safe

ROOT = Path(__file__).resolve().parents[2]
UNIT = "helix-storage::chunk-000::unit-000"
HOSTILE = "\x1b[2J\x1b]0;pwned\x07Helix\x00 stores\x9b31m blobs \u202eevil\u202c\r done"
# Anything a terminal would act on rather than show.
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def llm_config(tmp_path: Path, config_path: Path, url: str) -> Path:
    config = tmp_path / "config"
    shutil.copytree(config_path, config)
    llm = json.loads((config / "llm.json").read_text())
    llm.update(baseUrl=url, timeoutSeconds=5)
    (config / "llm.json").write_text(json.dumps(llm))
    return config


def ask(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MRPTUI_CONFIG": str(config), "MRPTUI_NO_CACHE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "mrptui.cli", "ask", "What does Helix store?", "--gs", "gs-llm-fast", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def ask_in_process(config: Path, capsys, monkeypatch, *extra: str) -> tuple[int, str, str]:
    """The same command through `mrptui.cli.main`, which puts the escaping streams in place: what
    these tests check is what it writes, not the process boundary (the plain ask keeps that).
    Stdin is empty, as the subprocess's /dev/null was."""
    from mrptui.cli import main

    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setenv("MRPTUI_CONFIG", str(config))
    monkeypatch.setenv("MRPTUI_NO_CACHE", "1")
    capsys.readouterr()
    code = main(["ask", "What does Helix store?", "--gs", "gs-llm-fast", *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_terminal_safe_escapes_controls_and_keeps_text():
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("\x1b[2J\x07\x00\x9b\u202e\r") == "\\u001b[2J\\u0007\\u0000\\u009b\\u202e\\u000d"
    assert terminal_safe("Größe — naïve 東京") == "Größe — naïve 東京"


def test_every_write_path_of_the_stream_escapes():
    import io

    from mrptui.terminal_text import SafeStream

    out = io.StringIO()
    stream = SafeStream(out)
    stream.write("a\x1b[2J")
    stream.writelines(["\x07b\n", "\u202ec"])
    print("\x00d", file=stream)
    assert out.getvalue() == "a\\u001b[2J\\u0007b\n\\u202ec\\u0000d\n"


def test_ask_prints_an_llm_answer_with_its_escape_sequences_escaped(tmp_path, config_path, llm_server):
    for _ in range(4):
        llm_server.reply(f"{HOSTILE} [{UNIT}]")
    done = ask(llm_config(tmp_path, config_path, llm_server.url))
    assert llm_server.received, done.stderr
    assert done.returncode in (0, 1), done.stderr
    assert not CONTROLS.search(done.stdout + done.stderr), repr(done.stdout)
    assert "\\u001b[2J" in done.stdout and "\\u202eevil" in done.stdout, done.stdout


def test_ask_json_carries_the_reply_with_its_controls_escaped(tmp_path, config_path, llm_server, capsys, monkeypatch):
    """The LLM client escapes a reply as it arrives (core/infra/terminal_text.py), so the answer every
    surface shows, the explorer included, holds the escapes, not the controls."""
    for _ in range(4):
        llm_server.reply(f"{HOSTILE} [{UNIT}]")
    _, out, _ = ask_in_process(llm_config(tmp_path, config_path, llm_server.url), capsys, monkeypatch, "--json")
    assert not CONTROLS.search(out), repr(out)
    answer = json.loads(out)["answer"]
    assert terminal_safe(HOSTILE) in answer and not CONTROLS.search(answer)


def test_the_llm_client_escapes_a_reply_before_any_plugin_reads_it(config_path, llm_server):
    from core.infra.llm import LlmClient, LlmConfig

    llm_server.reply(HOSTILE)
    client = LlmClient(LlmConfig(base_url=llm_server.url, api_key="k", timeout_s=2))
    reply = client.chat([{"role": "user", "content": "hi"}])
    assert reply == terminal_safe(HOSTILE) and not CONTROLS.search(reply)


def test_step_prints_an_llm_error_reason_with_its_escape_sequences_escaped(
    tmp_path, config_path, llm_server, capsys, monkeypatch
):
    for _ in range(4):
        llm_server.reply_raw(503, "\x1b]0;title\x07\x1b[2Jbusy\u202e".encode())
    _, out, err = ask_in_process(llm_config(tmp_path, config_path, llm_server.url), capsys, monkeypatch, "--step")
    assert llm_server.received, err
    assert "busy" in err, err
    assert not CONTROLS.search(out + err), repr(err)
