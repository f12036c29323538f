"""Restrictions written in words, not as a field (docs/security.md, "Red-team round six"):

- a restriction notice that is a whole line (`Staff only`, `For staff eyes only`, `Internal use
  only`, `Visible only to staff`, `Not for public release`, `Do not distribute`): who may read, then
  `only`; or what must not happen to the text;
- a confidentiality level after any field's name (`Sensitivity: Private`, `Classification:
  confidential`): the value's type decides, since the same names head public fields
  (`Sensitivity: 0.85`, `Classification: Mammalia`).

Both name the Acl: a reader who does not read them as one would publish what they restrict.
"""

from __future__ import annotations

import re

from core.text.words import (
    ACCESS_ENDINGS,
    CONFIDENTIALITY_LEVELS,
    GOES_ON,
    LEVEL_DEGREES,
    NOTICE_OBJECTS,
    PARTICIPLE_ENDINGS,
    PROSE_BEFORE_NAME,
    PROSE_OPENERS,
    RELEASE_NOUNS,
)

_WORD = r"[^\W\d_][\w'\-]*"
_CLOSE = r"[ \t.!*_`~)\]]*\Z"
# `[for] WHO [OBJECT] only`, `only for WHO`, `not for [ADJECTIVE] RELEASE`.
_NOTICE = re.compile(
    rf"(?P<for>for[ \t]+)?(?P<who>{_WORD})(?:[ \t]+(?P<object>{_WORD}))?(?:[ \t]+|-)only{_CLOSE}"
    rf"|(?:(?P<access>{_WORD})[ \t]+only|only(?:[ \t]+(?P<access_after>{_WORD}))?)[ \t]+(?:for|to)[ \t]+"
    rf"(?P<after>{_WORD}(?:[ \t]+{_WORD})?){_CLOSE}"
    rf"|not[ \t]+for[ \t]+(?:{_WORD}[ \t]+)?(?P<release>{_WORD}){_CLOSE}"
    rf"|do[ \t]+not[ \t]+(?P<verb>{_WORD})(?:[ \t]+{_WORD}){{0,3}}{_CLOSE}",
    re.IGNORECASE,
)
# Where a notice shows: `only` closing the line, or `not for`, `do not`, `… only`, `only` opening it.
_NOTICE_END = re.compile(rf"(?i:\bonly){_CLOSE}")
_NOTICE_START = re.compile(rf"(?i:[^A-Za-z]{{0,16}}(?:not[ \t]+for|do[ \t]+not|{_WORD}[ \t]+only|only)[ \t])")


def may_be_notice(text: str) -> bool:
    """Whether a line may be a restriction notice (`in` tests first, at C speed)."""
    head = text[:24]
    return ("nly" in text or "NLY" in text or "ot " in head or "OT " in head) and (
        _NOTICE_END.search(text, max(0, len(text) - 16)) is not None or _NOTICE_START.match(text) is not None
    )


_LEVEL_TAIL = rf"(?P<level>{_WORD})(?:[ \t\-]+(?:(?P<object>{_WORD})[ \t]+)?only)?{_CLOSE}"
# A level alone, or after a degree (`Internal use only` is a level alone, `Strictly confidential` not).
_LEVELS = (re.compile(_LEVEL_TAIL), re.compile(rf"(?P<degree>{_WORD})[ \t]+" + _LEVEL_TAIL))


def restriction_notice(form: str) -> tuple[int, int] | None:
    """(start, end) of a restriction notice that is all of `form` (a line after its leader, in
    canonical form), else None. Who may read is a word, none a function word (`The only`, `Not
    for the …` are sentences'); a second word is what the notice allows (`eyes`, `use`), unless
    `for` opens it or the first is a participle (`Authorized personnel only`)."""
    notice = _NOTICE.match(form)
    if notice is None:
        return None
    words = " ".join(filter(None, notice.group("who", "object", "after"))).casefold().split()
    if any(word in PROSE_OPENERS or word in PROSE_BEFORE_NAME or word in GOES_ON for word in words):
        return None
    access = notice.group("access") or notice.group("access_after")
    if access is not None and not access.casefold().endswith(ACCESS_ENDINGS):
        return None  # `Only visible to staff`, `Visible only to staff`; `Only listen to …` is prose's
    thing = notice.group("object")
    if not (thing is None or notice.group("for") or thing.casefold() in NOTICE_OBJECTS or _permitted(words[0])):
        return None  # `Euro inflation only` names a topic; `Authorized personnel only` who may read
    if notice.group("release") is not None and notice.group("release").casefold() not in RELEASE_NOUNS:
        return None
    if notice.group("verb") is not None and not _releases(notice.group("verb").casefold()):
        return None  # `Do not distribute`, `Do not publish this page`; `Do not disturb` is a door's
    return 0, len(form.rstrip(" \t.!*_`~)]"))


def _releases(verb: str) -> bool:
    """Whether a verb is a release noun's (`distribute`, `publish`, `disclose`: the noun's stem)."""
    return len(verb) >= _STEM and any(noun.startswith(verb[:_STEM]) for noun in RELEASE_NOUNS)


_STEM = 5  # `publi`sh and `publi`cation, `distr`ibute and `distr`ibution; `distu`rb is neither


def _permitted(word: str) -> bool:
    """Whether a notice's first word is a participle (`Authorized`, `Existing`): it says who may."""
    return word.endswith(PARTICIPLE_ENDINGS)


def confidentiality_level(value: str) -> bool:
    """Whether a field's value is a level of a confidentiality scale (`Private`, `Strictly
    confidential`, `Internal use only`), not the field's own value (`0.85`, `Mammalia`)."""
    written = value.strip(" \t*_`~\"'")
    return any(_level(pattern.match(written)) for pattern in _LEVELS)


def _level(level: re.Match[str] | None) -> bool:
    if level is None or level["level"].casefold() not in CONFIDENTIALITY_LEVELS:
        return False
    degree, thing = level.groupdict().get("degree"), level["object"]
    return (degree is None or degree.casefold() in LEVEL_DEGREES) and (
        thing is None or thing.casefold() in NOTICE_OBJECTS
    )
