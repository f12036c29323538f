"""The wheel ships config/ and sample_kb/, and setuptools has nothing to warn about on install."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]


def _bundled_packages() -> dict[str, Path]:
    """Each remapped data package (core.bundled_*) and every folder below it, as dotted names."""
    found = {}
    for package, folder in _setuptools()["package-dir"].items():
        root = ROOT / folder
        for directory in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
            dotted = ".".join([package, *directory.relative_to(root).parts])
            found[dotted] = directory
    return found


def test_every_bundled_folder_is_a_listed_package_with_its_files_as_data():
    # A data folder missing from `packages` is what makes setuptools print its long
    # "Package ... is absent from the `packages` configuration" warning on every install.
    setuptools = _setuptools()
    bundled = _bundled_packages()
    assert "core.bundled_kb.howto" in bundled
    missing = sorted(set(bundled) - set(setuptools["packages"]))
    assert missing == []
    for package, directory in bundled.items():
        if any(p.is_file() for p in directory.iterdir()):
            assert setuptools["package-data"].get(package), f"{package}'s files are not package data"


def test_every_code_package_is_listed():
    listed = set(_setuptools()["packages"])
    for top in ("core", "mrptui"):
        for init in (ROOT / top).rglob("__init__.py"):
            dotted = ".".join(init.parent.relative_to(ROOT).parts)
            assert dotted in listed, f"{dotted} is not in pyproject's packages"


def test_a_build_carries_the_nlp_data_and_it_loads(tmp_path):
    # build_py is the step that puts packages and their package data into a wheel; run on a copy
    # so the checkout gets no build/ folder.
    import shutil
    import subprocess
    import sys

    skip = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in ("core", "mrptui", "config", "sample_kb"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=skip)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    command = [sys.executable, "-c", "from setuptools import setup; setup()", "build_py", "--build-lib", "out"]
    built = subprocess.run(command, check=True, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert "Package would be ignored" not in built.stdout + built.stderr
    built = tmp_path / "out" / "core" / "nlp"
    for name in ("upos-ewt.json.gz", "lexicon.bin.gz"):
        assert (built / "data" / name).read_bytes() == (ROOT / "core" / "nlp" / "data" / name).read_bytes()
    from core.nlp import lexicon, tagger

    assert lexicon.load(built / "data" / "lexicon.bin.gz").lemma("mice") == "mouse"
    assert "NOUN" in tagger.load(built / "data" / "upos-ewt.json.gz").classes
