"""One module of a package whose `__init__` imports far more than that module needs.

`import nltk.chunk.regexp` first runs `nltk/__init__`, which imports nearly all of nltk and, when
installed, scipy and numpy (0.6-0.8 CPU s, 1-4 s on a loaded machine), although the chunker needs
about thirty small modules. `import_submodule` loads the module with every package of its
distribution standing in as a placeholder: the placeholder runs none of its `__init__`, and a
name that `__init__` re-exports (`from nltk.tree import Tree`) is imported from where the
`__init__` would have taken it, only when something asks for it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
from functools import lru_cache
from types import ModuleType

# Held while placeholders are in sys.modules: two loads at once would remove each other's modules.
_LOCK = threading.Lock()


def import_submodule(name: str, absent: tuple[str, ...] = (), unused: tuple[str, ...] = ()) -> ModuleType:
    """`importlib.import_module(name)` without running the `__init__` of its packages. Once the
    module is loaded, the placeholders and modules loaded with them leave sys.modules again, so a
    later `import` of the package anywhere gets the real package. When the top package is
    imported already, this is a plain import.

    `absent` names optional modules (imported under `try: ... except ImportError`) that are not
    imported yet and that the load should find missing instead of importing.

    `unused` names modules of the same package that the load imports names from but that the
    caller never calls (nltk's chunker binds corpus tag maps and scoring it does not use when it
    parses): they get a stand-in whose names raise `NotLoadedError` when called, and what they
    import is not imported."""
    top = name.partition(".")[0]
    with _LOCK:
        if top in sys.modules:
            return importlib.import_module(name)
        if importlib.util.find_spec(top) is None:
            raise ImportError(f"{top} is not installed")
        # None in sys.modules makes `import` raise ImportError at once, without importing parents.
        blocked = [module for module in absent if module not in sys.modules]
        sys.modules.update(dict.fromkeys(blocked))  # type: ignore[arg-type]  # typeshed allows no None there
        finder = _PlaceholderFinder(top, frozenset(unused))
        sys.meta_path.insert(0, finder)
        try:
            return importlib.import_module(name)
        finally:
            sys.meta_path.remove(finder)
            for module in blocked:
                sys.modules.pop(module, None)
            for loaded in [m for m in sys.modules if m == top or m.startswith(top + ".")]:
                del sys.modules[loaded]


class NotLoadedError(RuntimeError):
    """A name of a module that `import_submodule` was told the caller does not use was called."""


class _PlaceholderFinder(importlib.abc.MetaPathFinder):
    """Finds the modules of one top package as usual, but gives its packages a placeholder loader
    and the `unused` modules a stand-in."""

    def __init__(self, top: str, unused: frozenset[str]) -> None:
        self._top = top
        self._unused = unused

    def find_spec(self, fullname, path, target=None):
        if fullname != self._top and not fullname.startswith(self._top + "."):
            return None
        if fullname in self._unused:
            return importlib.machinery.ModuleSpec(fullname, _StandInLoader())
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.submodule_search_locations is not None and spec.origin:
            spec.loader = _PlaceholderLoader(spec.origin)
        return spec


class _PlaceholderLoader(importlib.abc.Loader):
    def __init__(self, init_file: str) -> None:
        self._init_file = init_file

    def create_module(self, spec):
        return None

    def exec_module(self, module: ModuleType) -> None:
        package, init_file = module.__name__, self._init_file

        def reexport(attribute: str):
            source = _reexports(init_file).get(attribute)
            if source is None or attribute.startswith("__"):
                raise AttributeError(f"module {package!r} has no attribute {attribute!r}")
            origin = importlib.util.resolve_name(source[0], package)
            if origin == package:  # `from . import x` in the package's own __init__: submodule x
                value = importlib.import_module(f"{package}.{source[1]}")
            else:
                value = _from_import(origin, source[1])
            setattr(module, attribute, value)
            return value

        module.__getattr__ = reexport  # type: ignore[method-assign]  # PEP 562: a module-level __getattr__


class _StandInLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module: ModuleType) -> None:
        def not_loaded(attribute: str):
            if attribute.startswith("__"):
                raise AttributeError(f"module {module.__name__!r} has no attribute {attribute!r}")

            def call(*args, **kwargs):
                raise NotLoadedError(f"{module.__name__}.{attribute} was not loaded (import_submodule's `unused`)")

            return call

        module.__getattr__ = not_loaded  # type: ignore[method-assign]  # PEP 562: a module-level __getattr__


def _from_import(module_name: str, attribute: str):
    """What `from module_name import attribute` binds: an attribute, else a submodule."""
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        return importlib.import_module(f"{module_name}.{attribute}")


@lru_cache(maxsize=None)
def _reexports(init_file: str) -> dict[str, tuple[str, str]]:
    """Bound name -> (module, name) of every `from module import name [as bound]` in an `__init__`,
    including those under `try` or `if` (the first one of a name wins, as a first import would)."""
    with open(init_file, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), init_file)
    names: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    names.setdefault(alias.asname or alias.name, (source, alias.name))
    return names
