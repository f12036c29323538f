"""An edited copy of the shipped config folder, and the CLI run on it in a child process: the engine
fault tests and the bounded KB-call tests both start from these."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def edited_config(
    tmp_path: Path, config_path: Path, edit: dict[str, object] | None = None, name: str = "engine.json"
) -> Path:
    """A copy of the shipped config folder with `edit` merged into one file (dotted keys go deep)."""
    config = tmp_path / "config"
    if not config.exists():
        shutil.copytree(config_path, config)
    data = json.loads((config / name).read_text())
    for dotted, value in (edit or {}).items():
        *parents, last = dotted.split(".")
        node = data
        for key in parents:
            node = node[key]
        node[last] = value
    (config / name).write_text(json.dumps(data, indent=2))
    return config


def cli_process(*args: str, cwd: Path = ROOT, env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m mrptui.cli` in a child: for what only a process shows (a plugin that exits or hangs)."""
    env = {**os.environ, **(env_extra or {})}
    env.pop("MRPTUI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "mrptui.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env
    )
