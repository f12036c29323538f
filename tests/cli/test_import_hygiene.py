"""`core` stays usable headless: importing all of it never pulls in textual or mrptui."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def python_prints(script: str, env: dict[str, str] | None = None) -> str:
    """What `script` prints, run by a fresh interpreter in the checkout."""
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    ).stdout


def test_core_never_imports_textual_or_mrptui() -> None:
    modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts)
        for p in (ROOT / "core").rglob("*.py")
        if p.name != "__init__.py"
    )
    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'mrptui'))\n"
        "print(','.join(bad))\n"
    )
    assert python_prints(script).strip() == ""
    assert len(modules) > 20


# What `mrptui ask` must not pay for: the TUI, other commands' engines, test/eval libraries and
# the HTTP stack's connections (only a configured LLM or dense endpoint needs them; "What is Helix?"
# chunks nothing, so not even nltk's chunker and its `regex` load), the process pool (only a first
# load of a large KB starts one) and the scan threads (only a large HDC scan). With every KB file
# in the index cache and the default (BM25) profile, neither does it need ThinkingDB, the stored
# unit vectors (HDC and dense builds), the JSON Lines reader, the why-not explainer, the yes/no
# polarity patterns or difflib (did-you-mean hints on errors).
ASK_NEVER_IMPORTS = (
    "textual",
    "rich",
    "hypothesis",
    "ir_measures",
    "multiprocessing",
    "regex",
    "http.client",
    "ssl",
    "concurrent.futures.process",
    "concurrent.futures.thread",
    "difflib",
    "core.eval.labelled",
    "core.eval.queries",
    "core.eval.answer_checks",
    "core.eval.squad",
    "core.eval.squad_report",
    "core.eval.beir",
    "core.kb.checks",
    "core.kernel.rundiff",
    "core.retrieval.thinkingdb",
    "core.store.vectors",
    # Merging the files' BM25 parts: a warm open maps the merged index a cold one saved.
    "core.retrieval.bm25.merge",
    # The HDC lane: the default profile's question never reaches it; an opened KB keeps only its
    # empty unit-vector cache (core/retrieval/hdc/unit_cache.py).
    "core.retrieval.hdc.encoding",
    "core.retrieval.hdc.index",
    "core.retrieval.hdc.scan",
    "core.store.vector_sets",
    "core.cnl.jsonl",
    # The file readers: a warm ask reads every unit from the index cache (issue 41). Nor does it
    # validate a unit or read a permission line: Intent CNL and the passages' sentences need only
    # core/cnl/source_text.py and plain_sentences.py.
    "core.cnl.source",
    "core.cnl.markdown",
    "core.cnl.plaintext",
    "core.cnl.validate",
    "core.cnl.permission_inline",
    "core.cnl.permissions",
    "html",
    "core.answer.whynot",
    "core.answer.polarity",
    "mrptui.app",
    "mrptui.state",
    "mrptui.run_control",
    "mrptui.run_points",
    "mrptui.live_run",
    "mrptui.run_pump",
    "mrptui.commands.step",
    "mrptui.commands.eval",
    # Another command's module, and what only they or a stored conversation need (issue 41).
    "mrptui.commands.check",
    "mrptui.commands.ingest",
    "mrptui.commands.retrieve",
    "mrptui.commands.replay",
    "mrptui.commands.cache",
    "mrptui.commands.memory",
    "mrptui.commands.init",
    "core.memory.store",
    "core.memory.conversation",
    # Compiled kernels and their compiler: a small KB's one-off question never waits for them.
    "numba",
    "llvmlite",
    "scipy",
    # The sharded search (issue 40) and its cluster: only `--cluster`/`--shards` or cluster.json's
    # address start or reach one; a plain ask without a cluster.json does not even import its
    # settings model (issue 41).
    "dask",
    "distributed",
    "tornado",
    "cloudpickle",
    "core.kernel.shard_session",
    "core.kb.sharding.config",
    "core.kb.sharding.sharded",
    "core.kb.sharding.shards",
    "core.kb.sharding.shard_tasks",
    "core.kb.sharding.global_bm25",
    # Conversation memory's writers, and the libraries the explorer draws with.
    "core.memory.turns",
    "core.memory.journal",
    # Completing a follow-up (core/memory/completion.py): the mention finder, the referent model
    # and what only they read. Without a session a question has nothing to be completed from
    # (issue 41).
    "core.memory.completion",
    "core.memory.mentions",
    "core.memory.referents",
    "core.memory.people",
    "core.memory.passage",
    # Packing conversation records into an LLM prompt, and reading lifespans for a term the
    # sentence leaves unsaid or a date asked for (issue 41).
    "core.memory.packing",
    "core.answer.lifespans",
    "nltk",
    "pygments",
    "markdown_it",
)


def warm_ask_loads(question: str, modules: tuple[str, ...], cache: Path) -> list[str]:
    """Which of `modules` a warm `mrptui ask question` on the sample KB imported (it must answer)."""
    script = (
        "import contextlib, io, sys\n"
        "from mrptui.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()) as out: code = main(['ask', {question!r}])\n"
        f"loaded = sorted(m for m in {modules!r} if m in sys.modules)\n"
        "print(code, bool(out.getvalue().strip()), ','.join(loaded))\n"
    )
    env = {**os.environ, "MRPTUI_CACHE_DIR": str(cache)}
    # The first run fills the index cache; the second is the warm ask measured here.
    printed = [python_prints(script, env) for _ in range(2)]
    code, answered, loaded = printed[-1].split(" ", 2)
    assert (code, answered) == ("0", "True")
    return loaded.strip().split(",") if loaded.strip() else []


def test_cli_ask_imports_only_what_asking_needs(tmp_path) -> None:
    assert warm_ask_loads("What is Helix?", ASK_NEVER_IMPORTS, tmp_path / "cache") == []


def test_cli_ask_that_chunks_loads_the_chunker_without_nltks_network_and_corpus_modules(tmp_path) -> None:
    # Coreference chunks this question's evidence with nltk's RegexpParser (its `regex` loads),
    # whose modules import, for what parsing never calls, nltk.pathsec (urllib.request, http.client,
    # ssl) and nltk.util (pydoc); ThinkingDB's seed search would import numpy.ma through np.unique
    # (issue 41).
    lean = ("urllib.request", "http.client", "ssl", "pydoc", "numpy.ma")
    loaded = warm_ask_loads("Which services use Python?", ("regex", *lean), tmp_path / "cache")
    assert loaded == ["regex"]


def test_cli_help_lists_every_command_without_importing_their_modules() -> None:
    # Each subcommand's arguments are added when the parse reaches it (mrptui/cli.py): the top
    # level's help is drawn from the names and one-line helps alone.
    script = (
        "import contextlib, io, sys\n"
        "from mrptui.cli import SUBCOMMANDS, main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try: main(['--help'])\n"
        "    except SystemExit: pass\n"
        "commands = sorted(m for m in sys.modules if m.startswith('mrptui.commands.'))\n"
        "listed = all(name in out.getvalue() for name in SUBCOMMANDS)\n"
        "print(listed, ','.join(commands), 'core.kernel.session' in sys.modules)\n"
    )
    assert python_prints(script).split() == ["True", "mrptui.commands.explore", "False"]


def test_cli_limits_blas_threads_before_numpy_is_imported() -> None:
    # OpenBLAS reads the variable once, when numpy is first imported (mrptui/cli.py says why).
    script = (
        "import os, sys\n"
        "os.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
        "import mrptui.cli\n"
        "print('numpy' in sys.modules, os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    assert python_prints(script).split() == ["False", "1"]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    assert python_prints("import os, mrptui.cli; print(os.environ['OPENBLAS_NUM_THREADS'])", env).strip() == "2"


def test_bundled_resources_are_found_without_a_checkout(tmp_path, monkeypatch) -> None:
    import core.infra.resources as resources

    installed = tmp_path / "site-packages" / "core"
    (installed / "bundled_config").mkdir(parents=True)
    (installed / "bundled_kb").mkdir()
    monkeypatch.setattr(resources, "_PACKAGE_DIR", installed)
    monkeypatch.delenv("MRPTUI_CONFIG", raising=False)
    monkeypatch.delenv("MRPTUI_KB", raising=False)
    assert resources.config_dir() == installed / "bundled_config"
    assert resources.sample_kb_dir() == installed / "bundled_kb"
    monkeypatch.setenv("MRPTUI_KB", str(tmp_path / "mine"))
    assert resources.sample_kb_dir() == tmp_path / "mine"


def test_cli_collects_less_often_while_it_runs_then_restores_the_collector() -> None:
    # A pass per 700 allocations walked the imports' ~45k objects over and over, and passes per
    # 20,000 still walked each object a one-shot command made once (mrptui/cli.py): a command other
    # than the explorer makes its objects (here 60,000 that outlive it, as imports do) unwalked,
    # and they are not walked all at once when main puts the threshold back either.
    script = (
        "import contextlib, gc, io, sys\n"
        "from mrptui import cli\n"
        "seen, kept = [], []\n"
        "def run(command, args):\n"
        "    seen.append((command, gc.get_threshold()[0]))\n"
        "    kept.extend([] for _ in range(60_000))\n"
        "    return 0\n"
        "cli._run = run\n"
        "before = gc.get_threshold()\n"
        "walks = gc.get_stats()[0]['collections']\n"
        "with contextlib.redirect_stdout(io.StringIO()): cli.main(['ask', 'x'])\n"
        "after = [[] for _ in range(500)]\n"
        "walked = gc.get_stats()[0]['collections'] - walks\n"
        "cli.main([])\n"
        "expected = [('ask', cli.ONE_SHOT_YOUNG_COLLECTION_EVERY), ('explore', cli.YOUNG_COLLECTION_EVERY)]\n"
        "print(seen == expected, walked, gc.get_threshold() == before)\n"
    )
    assert python_prints(script).split() == ["True", "0", "True"]


def test_every_dataclass_has_a_docstring() -> None:
    # Python 3.11's @dataclass gives a class without one a docstring built with inspect.signature,
    # at import: ~0.27 M instructions a class, 24 of them in every warm ask (issue 41).
    bare = []
    for path in sorted([*(ROOT / "core").rglob("*.py"), *(ROOT / "mrptui").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef) or ast.get_docstring(node) is not None:
                continue
            if any("dataclass" in ast.unparse(d) for d in node.decorator_list):
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert bare == []
