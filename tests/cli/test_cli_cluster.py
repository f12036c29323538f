"""`--cluster` on ask and retrieve: bad values are one line and exit 2, before the KB opens; a
scheduler that is not there is named. (The cluster itself: tests/properties/test_sharded_search.py.)"""

from __future__ import annotations

import pytest

from core.kb.sharding.cluster import Cluster, ClusterError
from core.kb.sharding.config import ClusterConfig
from mrptui.cli import main


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--cluster", "local:0"], "--cluster local:0: between 1 and 16 workers"),
        (["--cluster", "localhost"], "write local:N (N worker processes) or a scheduler address"),
        (["--cluster", "local:2", "--shards", "0"], "--shards: Input should be greater than or equal to 1"),
        (["--shards", "3"], "--shards and --shard-dir need --cluster"),
    ],
)
@pytest.mark.parametrize("command", ["ask", "retrieve"])
def test_bad_cluster_options_are_one_line_and_exit_2(command, extra, message, capsys) -> None:
    assert main([command, "what uses python", *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_why_not_runs_in_one_process(capsys) -> None:
    assert main(["retrieve", "what uses python", "--why-not", "x::c::u", "--cluster", "local:2"]) == 2
    assert "--why-not scores every unit in one process" in capsys.readouterr().err


def test_a_scheduler_that_is_not_there_is_named() -> None:
    pytest.importorskip("distributed")
    with pytest.raises(ClusterError, match=r"cluster tcp://127\.0\.0\.1:9: "):
        Cluster("tcp://127.0.0.1:9", ClusterConfig(connect_timeout_s=1.0))


def _config_with(tmp_path, cluster_json: str):
    import shutil

    from core.infra.resources import config_dir

    folder = tmp_path / "config"
    shutil.copytree(config_dir(), folder)
    (folder / "cluster.json").write_text(cluster_json, encoding="utf-8")
    return folder


def test_cluster_json_is_checked_with_file_and_line(tmp_path, capsys) -> None:
    folder = _config_with(tmp_path, '{\n  "shards": 4,\n  "shardTimeoutMs": 1\n}\n')
    assert main(["check", str(folder)]) == 1
    assert "cluster.json:3:3: INVALID_CONFIG shardTimeoutMs" in capsys.readouterr().out
    assert main(["ask", "what uses python", "--config", str(folder)]) == 2
    assert "cluster.json:3:3" in capsys.readouterr().err


def test_the_config_address_is_used_without_the_flag(tmp_path, capsys) -> None:
    folder = _config_with(tmp_path, '{"address": "local:0"}\n')
    assert main(["ask", "what uses python", "--config", str(folder)]) == 2
    assert "--cluster local:0: between 1 and 16 workers" in capsys.readouterr().err


def test_local_workers_that_never_start_are_named_within_the_connect_timeout(tmp_path) -> None:
    """A worker process that hangs before it starts (here: at interpreter start-up, as a broken
    environment would) fails the cluster with a named error, never a wait without end."""
    pytest.importorskip("distributed")
    import os
    import subprocess
    import sys

    (tmp_path / "sitecustomize.py").write_text(
        "import sys, time\nif any('multiprocessing' in a for a in sys.orig_argv):\n    time.sleep(600)\n",
        encoding="utf-8",
    )
    code = (
        "from core.kb.sharding.cluster import Cluster, ClusterError\n"
        "from core.kb.sharding.config import ClusterConfig\n"
        "if __name__ == '__main__':\n"
        "    try:\n"
        "        Cluster('local:1', ClusterConfig(connect_timeout_s=3.0))\n"
        "    except ClusterError as exc:\n"
        "        print('named:', exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.getcwd()])}
    script = tmp_path / "start.py"
    script.write_text(code, encoding="utf-8")
    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as sink:  # a file, not a pipe a hung grandchild would hold open
        subprocess.run([sys.executable, str(script)], env=env, stdout=sink, stderr=subprocess.STDOUT, timeout=120)
    text = out.read_text(encoding="utf-8")
    assert "named: local:1: the workers did not start (timeout 3 s)" in text, text[-2000:]
