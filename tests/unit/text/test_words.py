"""Every English word list of core lives in core/text/words.py: a module that defines its own at module
level fails here, so lists cannot drift apart again (they had: the yes/no openers of the planner
and of the answer type differed by "had", the negations of the support check and of the yes/no
polarity by nine words, and the wh-words were written five times)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core.text import words

CORE = Path(__file__).resolve().parents[3] / "core"
# A literal of this many lowercase words (or a "…".split() of them) is a word list.
MIN_WORDS = 3
# Module-level lists of lowercase words that are not English but names of a format's fields,
# keys or arrays, which only look like words.
ALLOWED = {
    ("answer/answerability.py", "FEATURES"),  # names of the answerability features (a model's columns)
    ("memory/referents.py", "FEATURES"),  # names of the referent model's features (its weights' keys)
    ("memory/position.py", "BUCKETS"),  # names of the position model's buckets (its weights' keys)
    ("cnl/jsonl.py", "_NAMES"),  # keys a JSON Lines unit may hold
    ("cnl/json_keys.py", "_PAIR_NAMES"),  # keys that name the field of a pair object ({"key": "acl", …})
    ("cnl/permission_names.py", "UNAMBIGUOUS"),  # spellings of the permission field names a reader refuses
    ("cnl/permission_names.py", "SYNONYMS"),  # names a permission field may be written under, at a label position
    ("cnl/permission_names.py", "_DATE_PREFIXES"),  # how a date field's name begins (effective…, valid…, expir…)
    ("cnl/permission_names.py", "_DATE_ENDS"),  # how an end date field's name ends (…to, …until, …through)
    ("cnl/permission_readings.py", "_NAMING"),  # HTML's attributes that name a field (<meta name=…>)
    ("cnl/permission_readings.py", "_BLOCKS"),  # HTML's tag names a renderer starts a line at (<tr>, <li> …)
    ("cnl/intent_cnl.py", "_INTENT_FIELDS"),  # the Intent CNL's field names
    ("cnl/validate.py", "_TRIPLE"),  # a unit's triple field names
    ("store/contents.py", "_OWN_NAMES"),  # the file and folder names the store writes at a cache's root
    ("nlp/lexicon.py", "POS_NAMES"),  # the lexicon's part-of-speech names, its data's column values
    ("retrieval/bm25/fields.py", "FIELDS"),  # unit fields BM25 indexes
    ("retrieval/hdc/encoding.py", "FIELDS"),  # unit fields HDC encodes
    ("retrieval/hdc/tokens.py", "_TOPIC"),  # unit fields, looked up among the token fields
    ("retrieval/rules.py", "_TOP_LEVEL_KEYS"),  # keys of config/thinkingdb.json
    ("store/segment.py", "_ARRAYS"),  # names of a stored segment's arrays
}


# A regular expression's group of this many lowercase words or phrases ("(?:but|although|yet)")
# is a word list written as a pattern. The answer package builds its patterns from the lists here
# (`words.any_of`); the other packages' patterns are not checked yet.
PATTERN_PACKAGES = ("answer",)
_ALTERNATION = re.compile(
    r"(?:(?<=\(\?:)|(?<=\())[a-z]+(?: [a-z]+)*(?:\|[a-z]+(?: [a-z]+)*){%d,}(?=\))" % (MIN_WORDS - 1)
)


def _words(node: ast.AST) -> list[str]:
    """The lowercase words a set, list or tuple literal holds, or a "…".split() says."""
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        items = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "split"
        and isinstance(node.func.value, ast.Constant)
        and isinstance(node.func.value.value, str)
        and not node.args
    ):
        items = node.func.value.value.split()
    else:
        return []
    return [item for item in items if item.isalpha() and item.islower()]


def _literals(node: ast.AST):
    """The node's literals, except inside a subscript (a `Literal[...]` type names values, not words)."""
    if isinstance(node, ast.Subscript):
        return
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _literals(child)


def word_lists(source: str) -> list[tuple[str, int, list[str]]]:
    """(name, line, words) of every module-level assignment holding a word list."""
    found = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets = [statement.target]
        else:
            continue
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        if names == ["__all__"]:
            continue
        listed = next((w for node in _literals(statement.value) if len(w := _words(node)) >= MIN_WORDS), None)
        if listed:
            found.append((names[0] if names else "?", statement.lineno, listed))
    return found


@pytest.fixture(scope="module")
def core_word_lists() -> dict[str, list[tuple[str, int, list[str]]]]:
    """Each core module's word lists, by its path under core/: parsed once for the two tests below."""
    return {
        path.relative_to(CORE).as_posix(): word_lists(path.read_text(encoding="utf-8"))
        for path in sorted(CORE.rglob("*.py"))
    }


def test_no_core_module_but_words_defines_an_english_word_list(core_word_lists: dict) -> None:
    offenders = []
    for module, lists in core_word_lists.items():
        if module == "text/words.py":
            continue
        for name, line, listed in lists:
            if (module, name) not in ALLOWED:
                offenders.append(
                    f"core/{module}:{line} {name} = {' '.join(listed[:6])} …: move it to core/text/words.py"
                )
    assert not offenders, "\n".join(offenders)


def test_every_allowed_list_still_exists(core_word_lists: dict) -> None:
    """An allowance for a list that is gone (moved or renamed) would let a new one pass unseen."""
    present = {(module, name) for module, lists in core_word_lists.items() for name, _, _ in lists}
    assert ALLOWED <= present, ALLOWED - present


def test_the_scan_finds_the_shapes_lists_are_written_in() -> None:
    source = """
_A = frozenset("is are was".split())
_B = ("who", "whom", "whose")
_C = {"not", "never", "no"}
_D: tuple[str, ...] = ("one", "two", "three")
_E = ((1, frozenset(("person", "individual", "someone"))),)
_F = ("who", "whom")
Kind = Literal["turn", "note", "summary"]
__all__ = ["bind", "bundle", "hamming"]
"""
    assert [name for name, _, _ in word_lists(source)] == ["_A", "_B", "_C", "_D", "_E"]


def test_drifted_copies_stay_as_their_callers_read_them() -> None:
    # Two callers read different members; each keeps its own, named for what it does.
    assert words.AUXILIARIES - words.CUE_YES_NO_OPENERS == {"had"}
    assert words.QUESTION_TYPE_AUXILIARIES - words.AUXILIARIES == {"am", "might"}
    assert words.NEGATIONS - (words.DENIALS | words.NOUN_NEGATIONS) == {"n't"}
    assert words.ENTITY_WH <= words.WH_WORDS and words.WH_ARGUMENTS <= words.WH_WORDS
    assert words.BE_TENSED <= words.BE_FORMS


def patterned_lists(source: str) -> list[tuple[int, str]]:
    """(line, alternation) of every `re.compile` pattern that spells out a word list."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "compile"):
            continue
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "re" and node.args):
            continue
        pattern = node.args[0]
        pieces = pattern.values if isinstance(pattern, ast.JoinedStr) else [pattern]
        for piece in pieces:
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                found += [(node.lineno, m.group()) for m in _ALTERNATION.finditer(piece.value)]
    return found


def test_no_answer_pattern_spells_out_a_word_list() -> None:
    offenders = [
        f"core/{path.relative_to(CORE).as_posix()}:{line} {listed}: build it from a list in core/text/words.py"
        for package in PATTERN_PACKAGES
        for path in sorted((CORE / package).rglob("*.py"))
        for line, listed in patterned_lists(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "\n".join(offenders)


def test_years_are_read_by_the_patterns_of_words_only() -> None:
    """Two `_YEAR` patterns had drifted apart in two modules; both readings now stand in words."""
    defined = [
        f"core/{path.relative_to(CORE).as_posix()}:{node.lineno}"
        for path in sorted(CORE.rglob("*.py"))
        if path.relative_to(CORE).as_posix() != "text/words.py"
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and "YEAR" in t.id for t in node.targets)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "re.compile"
    ]
    assert not defined, defined
    assert words.YEAR_TOKEN.match("1920s") and not words.YEAR_TOKEN.match("450")
    assert words.LIFESPAN_YEAR.match("757") and not words.LIFESPAN_YEAR.match("1920s")


def test_the_pattern_scan_finds_alternations_of_words() -> None:
    source = r"""
import re
_A = re.compile(r"\b(?:but|although|yet)\b")
_B = re.compile(rf"^(?:the\s+)?(?:due to|owing to|so that){tail}")
_C = re.compile(r"\b(?:yes|no)\b")
_D = re.compile(rf"\b{any_of(WORDS)}\b")
_E = re.compile(r"(?:\d+st|nd|rd)")
"""
    assert [listed for _, listed in patterned_lists(source)] == ["but|although|yet", "due to|owing to|so that"]
    assert words.any_of(("due to", "yet")) == r"(?:due\ to|yet)"
