"""Read leases on mapped cache files (core/infra/leases.py): a broken lease is given up at once,
though the mapping made from its file lives on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# In a child process: arming installs a SIGIO handler, which the test runner's process keeps.
_GIVE_UP = """
import os, sys
from pathlib import Path
from core.infra import leases
from core.store.mapped import read_checked

path = Path(sys.argv[1])
if not leases.arm():
    print("unarmed"); sys.exit(0)
data = read_checked(path, release=False)
((key, (fd, _)),) = leases._HELD.items()
inode = os.stat(path).st_ino

def leased():
    return any("LEASE" in line and f":{inode} " in line for line in open("/proc/locks"))

print("before", leased())
with leases._LOCK:
    leases._BROKEN[key] = str(path)  # as SIGIO marks it when a writer opens the file
leases._poll()
print("after", leased(), len(data) > 0)
"""


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="leases are read from /proc/locks (Linux)")
def test_a_broken_lease_is_given_up_while_its_mapping_lives(tmp_path: Path) -> None:
    # Closing the lease's descriptor alone left the lease on the open file the mapping holds: a
    # writer truncating a cache file under a live explorer waited the lease-break time (45 s).
    path = tmp_path / "units.jsonl"
    path.write_bytes(b"x" * (1 << 20))
    out = subprocess.run(
        [sys.executable, "-c", _GIVE_UP, str(path)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert out == ["before", "True", "after", "False", "True"]
