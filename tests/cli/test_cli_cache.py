"""`mrptui cache info|clear` and the `--cache-dir` / `--no-cache` flags."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

import core.store.shared_stems as shared_stems
from core.store.contents import cache_refusal
from mrptui.cli import main
from tests.support.child_python import run_child
from tests.support.store_kb import write_kb


@pytest.fixture(autouse=True)
def _own_install_stems(tmp_path, monkeypatch):
    """`cache clear` removes the install's stored stems: here, a folder of the test's own, so the
    workspace's install keeps what its builds stored."""
    monkeypatch.setattr(shared_stems, "INSTALL_FOLDER", tmp_path / "install-stems")


def test_cache_info_lists_each_kb_file_and_clear_empties_it(tmp_path, monkeypatch, capsys):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    paths = write_kb(kb_dir, files=2)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert main(["--cache-dir", str(cache), "--kb", str(kb_dir), "check"]) == 0
    capsys.readouterr()
    assert main(["--cache-dir", str(cache), "cache", "info"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[-1] for line in lines[:-1]] == [str(p) for p in paths]
    assert lines[-1].startswith(f"{cache}: 2 cached file(s)")
    assert not (tmp_path / "elsewhere").exists()
    # The install's stored stems hold the KB's words too: a clear removes them, and only them.
    install = tmp_path / "unpacked"
    monkeypatch.setattr(shared_stems, "INSTALL_FOLDER", install)
    (install / "porter-stems-test").mkdir(parents=True, mode=0o700)
    (install / "porter-stems-test" / "1.stems").write_text("{}")
    (install / "lexicon.bin").write_text("unpacked")
    assert main(["--cache-dir", str(cache), "cache", "clear"]) == 0
    assert "freed" in capsys.readouterr().out
    assert not (install / "porter-stems-test").exists() and (install / "lexicon.bin").exists()
    assert main(["--cache-dir", str(cache), "cache", "info"]) == 0
    assert capsys.readouterr().out.strip() == f"{cache}: 0 cached file(s), 0 B"


def test_no_cache_writes_nothing_and_cache_commands_say_it_is_off(tmp_path, monkeypatch, capsys):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(cache))
    monkeypatch.setenv("MRPTUI_NO_CACHE", "0")
    assert main(["--no-cache", "--kb", str(kb_dir), "check"]) == 0
    assert not cache.exists()
    assert main(["--no-cache", "cache", "info"]) == 2
    assert "turned off" in capsys.readouterr().err


def test_cache_flags_apply_to_their_command_only_and_never_reach_the_environment(tmp_path, monkeypatch, capsys):
    """One process running several commands (the test suite, an embedding program): a command's
    --no-cache or --cache-dir must not turn the next command's cache off or move it."""
    from core.nlp import lexicon, tagger
    from core.nlp.lazy import Lazy

    kb_dir, own, flagged = tmp_path / "kb", tmp_path / "env-cache", tmp_path / "flag-cache"
    write_kb(kb_dir, files=1)
    # The tagger and lexicon load (and unpack into a cache) in this test, whatever ran before.
    monkeypatch.setattr(tagger, "_TAGGER", Lazy(tagger.load))
    monkeypatch.setattr(lexicon, "_LEXICON", Lazy(lexicon.load))
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(own))
    monkeypatch.delenv("MRPTUI_NO_CACHE", raising=False)
    before = dict(os.environ)
    assert main(["--no-cache", "--kb", str(kb_dir), "ask", "When is the tide slack?"]) == 0
    assert main(["--cache-dir", str(flagged), "--kb", str(kb_dir), "check"]) == 0
    assert dict(os.environ) == before
    assert flagged.is_dir() and not own.exists()
    assert main(["--kb", str(kb_dir), "check"]) == 0  # no flags: the environment's cache, on
    assert own.is_dir()
    capsys.readouterr()
    assert main(["cache", "info"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(f"{own}: 1 cached file(s)")


def test_clearing_an_absent_cache_is_not_an_error(tmp_path, monkeypatch, capsys):
    cache: Path = tmp_path / "never-made"
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(cache))
    assert main(["cache", "clear"]) == 0
    assert "0 B freed" in capsys.readouterr().out


def test_a_cache_that_cannot_be_written_is_said_once_and_every_command_still_answers(tmp_path, capsys):
    kb_dir, blocker = tmp_path / "kb", tmp_path / "a-file"
    write_kb(kb_dir, files=2)
    blocker.write_text("not a folder", encoding="utf-8")
    cache = blocker / "cache"  # its parent is a regular file: nothing can be written under it
    arguments = ["--cache-dir", str(cache), "--kb", str(kb_dir), "ask", "When is the tide slack?"]
    assert main([*arguments, "--json"]) == 0
    out, err = capsys.readouterr()
    warnings = [line for line in err.splitlines() if "index cache" in line]
    assert len(warnings) == 1 and "running without it" in warnings[0] and str(cache) in warnings[0]
    result = json.loads(out)
    assert result["status"] and result["diagnostics"]["cache_notes"] == [warnings[0].removeprefix("mrptui: warning: ")]
    # The same process opens the KB again (as the explorer's reload does): not said twice.
    assert main(arguments) == 0
    out, err = capsys.readouterr()
    assert "status:" in out and "index cache" not in err
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_a_damaged_segment_is_said_on_the_run_that_rebuilds_it_and_not_after(tmp_path, capsys):
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=2)
    arguments = ["--cache-dir", str(cache), "--kb", str(kb_dir), "ask", "When is the tide slack?"]
    assert main(arguments) == 0
    assert "index cache" not in capsys.readouterr().err
    units = sorted(cache.glob("segments/*/*/units.jsonl"))
    assert len(units) == 2
    units[0].write_bytes(units[0].read_bytes()[:-40])  # truncated: its checksum no longer matches
    assert main(arguments) == 0
    err = capsys.readouterr().err
    assert "unusable" in err and "rebuilt" in err
    assert main(arguments) == 0
    assert "unusable" not in capsys.readouterr().err


_PARTLY_CLEARED = """
import json, os, sys
from pathlib import Path
from mrptui.cli import main
import mrptui.commands.cache, mrptui.commands.ask, mrptui.commands.check  # imported while readable
import locale  # argparse's gettext imports it on first use; nothing else on the path does now
import html  # the permission grammar reads character references (`&#58;`) with it
if os.geteuid() == 0:  # root removes anything: drop to nobody, who owns the cache
    os.setgid(65534)
    os.setuid(65534)
kb, cache = sys.argv[1], Path(sys.argv[2])
assert main(["--cache-dir", str(cache), "--kb", kb, "check"]) == 0
key = (cache / "mac.key").read_bytes()
stuck = sorted(cache.glob("segments/*/*/meta.json"))[0].parent
os.chmod(stuck, 0o500)  # its files cannot be removed
code = main(["--cache-dir", str(cache), "cache", "clear"])
left = sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file())
os.chmod(stuck, 0o700)
sys.stdout.flush()
print(json.dumps({"code": code, "left": left, "key_kept": (cache / "mac.key").exists() and (cache / "mac.key").read_bytes() == key,
                  "stuck": str(stuck.relative_to(cache))}))
"""


def test_a_partly_cleared_cache_says_what_stayed_and_what_stayed_is_never_served(capsys, monkeypatch):
    base = Path(tempfile.mkdtemp(prefix="mrptui-clear-"))
    monkeypatch.setenv("MRPTUI_CACHE_DIR", str(base / "cache"))  # restored after the test
    try:
        _partly_cleared(base, capsys)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _partly_cleared(base: Path, capsys) -> None:
    base.chmod(0o755)
    kb_dir, cache = base / "kb", base / "cache"
    write_kb(kb_dir, files=3)
    for path in [base, *base.rglob("*")]:
        if os.geteuid() == 0:
            os.chown(path, 65534, 65534)
    done = run_child(_PARTLY_CLEARED, str(kb_dir), str(cache), timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["code"] == 1, "never 'cleared' when something stayed"
    assert "only partly cleared" in done.stderr and f"cannot remove {cache / result['stuck']}" in done.stderr
    assert f"cleared {cache}:" not in done.stdout
    assert not result["key_kept"], "the key went first: what stayed no longer verifies"
    assert result["left"] and all(name.startswith(result["stuck"]) for name in result["left"]), "the rest went"
    # The next open finds the leftover segment unusable under the new key: rebuilt, not served.
    if os.geteuid() == 0:
        for path in [cache, *cache.rglob("*")]:
            os.chown(path, 0, 0)
    capsys.readouterr()
    assert main(["--kb", str(kb_dir), "ask", "When is the tide slack?"]) == 0
    err = capsys.readouterr().err
    assert "unusable" in err and "rebuilt" in err, err


def _snapshot(folder: Path) -> dict[str, tuple[int, bytes]]:
    """Every entry under `folder` (the folder itself as "."): its mode and, for a file, its bytes."""
    entries = {".": (folder.stat().st_mode, b"")}
    for path in sorted(folder.rglob("*")):
        entries[str(path.relative_to(folder))] = (path.stat().st_mode, path.read_bytes() if path.is_file() else b"")
    return entries


def test_a_users_folder_named_as_the_cache_is_refused_never_narrowed_filled_or_cleared(tmp_path, capsys):
    """`--cache-dir ~/project` by mistake: its `sources/` has a name the store writes too."""
    kb_dir, project = tmp_path / "kb", tmp_path / "project"
    write_kb(kb_dir, files=1)
    (project / "sources").mkdir(parents=True)
    (project / "sources" / "draft.md").write_text("my draft", encoding="utf-8")
    (project / "notes.txt").write_text("keep me", encoding="utf-8")
    project.chmod(0o755)
    before = _snapshot(project)
    assert main(["--cache-dir", str(project), "--kb", str(kb_dir), "ask", "When is the tide slack?"]) == 0
    out, err = capsys.readouterr()
    assert "status:" in out
    assert f"refusing the index cache at {project}: it holds 'notes.txt', which mrptui did not write" in err
    assert main(["--cache-dir", str(project), "cache", "clear"]) == 2
    assert "it holds 'notes.txt'" in capsys.readouterr().err
    assert _snapshot(project) == before


def test_a_cache_without_the_tag_that_holds_only_what_the_store_writes_is_adopted(tmp_path, capsys):
    """A cache an older mrptui made has no CACHEDIR.TAG: it is used, tagged, and clears as before."""
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    assert main(["--cache-dir", str(cache), "--kb", str(kb_dir), "check"]) == 0
    (cache / "CACHEDIR.TAG").unlink()
    assert cache_refusal(cache) is None
    assert (cache / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")
    assert main(["--cache-dir", str(cache), "cache", "clear"]) == 0
    assert not (cache / "segments").exists() and not (cache / "CACHEDIR.TAG").exists()


def test_an_untagged_cache_caught_while_the_store_replaces_a_file_is_still_adopted(tmp_path):
    """Another process saving stems.json (or the key) leaves `.stems.json.<random>.tmp` beside it for
    a moment: the store's own temporary file, not the user's."""
    kb_dir, cache = tmp_path / "kb", tmp_path / "cache"
    write_kb(kb_dir, files=1)
    assert main(["--cache-dir", str(cache), "--kb", str(kb_dir), "check"]) == 0
    (cache / "CACHEDIR.TAG").unlink()
    (cache / ".stems.json.k2f9.tmp").write_bytes(b"{")
    assert cache_refusal(cache) is None
    (cache / "CACHEDIR.TAG").unlink()
    (cache / "stems.json.bak").write_bytes(b"{")  # not a name the store writes
    assert cache_refusal(cache) is not None


@pytest.mark.parametrize("written", ["-1", "abc", "4G", "²", "99999999999"])
def test_a_cache_bound_in_the_environment_that_is_not_used_is_said_and_never_crashes(
    tmp_path, monkeypatch, capsys, written
):
    """`-1` was read as 1 MB (every segment evicted on every open), `4G` as the default, both
    silently, and `²` (a digit `int` refuses) was an internal error; so was it for the workers."""
    kb_dir = tmp_path / "kb"
    write_kb(kb_dir, files=1)
    monkeypatch.setenv("MRPTUI_CACHE_MAX_MB", written)
    monkeypatch.setenv("MRPTUI_BUILD_WORKERS", written)
    assert main(["--cache-dir", str(tmp_path / "cache"), "--kb", str(kb_dir), "ask", "When is the tide slack?"]) == 0
    out, err = capsys.readouterr()
    assert "status:" in out
    assert f"$MRPTUI_CACHE_MAX_MB={written!r} is not a whole number of megabytes" in err
    assert "the cache keeps to the default 4,096" in err
    # A whole number is a worker count (capped); anything else was ignored without a word.
    said_workers = f"$MRPTUI_BUILD_WORKERS={written!r} is not a whole number of workers" in err
    assert said_workers is (written != "99999999999")
