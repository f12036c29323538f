"""core.infra.submodule: one module of a package, its packages' __init__ never run."""

from __future__ import annotations

import sys

import pytest

from core.infra.submodule import NotLoadedError, import_submodule


def _package(root, name: str) -> None:
    (root / name / "shapes").mkdir(parents=True)
    # Running either __init__ fails the import, as a test of "never runs" must be able to.
    (root / name / "__init__.py").write_text("raise RuntimeError('package init ran')\nfrom .shapes.base import Shape\n")
    (root / name / "shapes" / "__init__.py").write_text(
        "raise RuntimeError('subpackage init ran')\nfrom .base import Shape as Base\nfrom . import base\n"
    )
    (root / name / "shapes" / "base.py").write_text("class Shape:\n    sides = 0\n")
    (root / name / "shapes" / "square.py").write_text(
        f"from {name} import Shape\nfrom {name}.shapes import Base, base\n"
        "class Square(Shape):\n    sides = 4\nSAME = Base is Shape is base.Shape\n"
    )


def test_reexported_names_resolve_without_running_any_package_init(tmp_path, monkeypatch) -> None:
    _package(tmp_path, "heavy_pkg_x")
    monkeypatch.syspath_prepend(str(tmp_path))
    square = import_submodule("heavy_pkg_x.shapes.square")
    assert square.Square.sides == 4
    assert square.SAME
    assert not [m for m in sys.modules if m.split(".")[0] == "heavy_pkg_x"]


def test_absent_modules_are_missing_during_the_load_only(tmp_path, monkeypatch) -> None:
    (tmp_path / "opt_pkg_x").mkdir()
    (tmp_path / "opt_pkg_x" / "__init__.py").write_text("")
    (tmp_path / "opt_pkg_x" / "user.py").write_text(
        "try:\n    import json\n    HAVE = True\nexcept ImportError:\n    HAVE = False\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "json")
    assert import_submodule("opt_pkg_x.user", absent=("json",)).HAVE is False
    assert "json" not in sys.modules
    import json  # noqa: F401  (importable again once the load is over)


def test_unused_modules_are_stand_ins_whose_names_raise_when_called(tmp_path, monkeypatch) -> None:
    (tmp_path / "lean_pkg_x").mkdir()
    (tmp_path / "lean_pkg_x" / "__init__.py").write_text("")
    (tmp_path / "lean_pkg_x" / "heavy.py").write_text("raise RuntimeError('heavy module ran')\n")
    (tmp_path / "lean_pkg_x" / "parser.py").write_text(
        "from lean_pkg_x.heavy import score\ndef parse(text):\n    return text.split()\n"
        "def evaluate(text):\n    return score(text)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    parser = import_submodule("lean_pkg_x.parser", unused=("lean_pkg_x.heavy",))
    assert parser.parse("a b") == ["a", "b"]
    with pytest.raises(NotLoadedError, match=r"lean_pkg_x\.heavy\.score was not loaded"):
        parser.evaluate("a b")
    assert not [m for m in sys.modules if m.split(".")[0] == "lean_pkg_x"]
    # A later load without `unused` runs the real module.
    with pytest.raises(RuntimeError, match="heavy module ran"):
        import_submodule("lean_pkg_x.parser")


def test_a_package_that_is_not_installed_is_an_import_error() -> None:
    with pytest.raises(ImportError, match="not installed"):
        import_submodule("no_such_pkg_x.mod")
