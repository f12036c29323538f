"""Run the explorer on the scripted FakeSession: `python tests/tui/demo.py` (no engine needed)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from fake_kb import CALLER  # noqa: E402
from fakes import FakeSession  # noqa: E402

from mrptui.app import ExplorerApp  # noqa: E402

if __name__ == "__main__":
    ExplorerApp(FakeSession(), CALLER, "fake KB", show_durations="--durations" in sys.argv).run()
