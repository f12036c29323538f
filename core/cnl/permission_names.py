"""What a permission label's name and value read as (docs/security.md, "The permission-label
grammar"); core/cnl/permissions.py finds where they stand.

A name is compared in its canonical form (core/cnl/canonical.py) with every character but letters
and digits dropped. It is a permission field's name, its plural, within one edit of `Region`,
`EffectiveFrom` or `EffectiveTo`, a name starting `effective`, `valid` or `expir`, or a synonym
(`SYNONYMS`: English words, a label only at a label position with a separator); the unambiguous
names (`UNAMBIGUOUS`: no English word) are labels with no separator too, and inside running prose.
A name of several words is read from its words (`_phrase`): a date label (`Embargoed until`) or a
compound named by a field's word (`Access Level`). A value after a name decides English names
(`typed_value`): "Access: the north gate" is prose, "Group leader: John Smith" a person's role.
"""

from __future__ import annotations

import re
from functools import lru_cache

from core.cnl.canonical import canonical_forms
from core.text.words import (
    AGENT_ENDINGS,
    CONCEALING,
    GO_LIVE_NAMES,
    GOES_ON,
    NEGATIONS,
    PARTICIPLE_ENDINGS,
    PERIOD_ENDS,
    PERIOD_STARTS,
    PROSE_BEFORE_NAME,
    PROSE_OPENERS,
    STATEMENT_OPENERS,
    SUNSET_NAMES,
)

FIELDS = ("Acl", "Region", "EffectiveFrom", "EffectiveTo")
# Canonical keys that are never an English word: a label wherever a name may stand, even with no
# separator, and inside running prose.
UNAMBIGUOUS: dict[str, str] = {
    **dict.fromkeys(
        (
            "acl",
            "acls",
            "acll",
            "alc",
            "acllist",
            "acltag",
            "acltags",
            "accesscontrollist",
            "accesscontrol",
            "accesslist",
            "accesstags",
        ),
        "Acl",
    ),
    **dict.fromkeys(("effectivefrom", "validfrom", "effectivestart", "effectivesince"), "EffectiveFrom"),
    **dict.fromkeys(
        ("effectiveto", "effectiveuntil", "effectivetill", "effectiveend", "validuntil", "validtill", "validthrough"),
        "EffectiveTo",
    ),
}
# Words that are a permission field only at a label position with a separator (`Audience: staff`).
SYNONYMS: dict[str, str] = {
    **dict.fromkeys(
        (
            "tag",
            "tags",
            "audience",
            "audiences",
            "visibility",
            "visibleto",
            "group",
            "groups",
            "roles",
            "allowed",
            "allowedgroups",
            "allowedroles",
            "allowedtags",
            "allowedusers",
            "permission",
            "permissions",
            "access",
            "accessgroups",
            "restrictedto",
            "clearance",
            "readers",
        ),
        "Acl",
    ),
    **dict.fromkeys(("region", "regions"), "Region"),
    **dict.fromkeys(
        ("effective", "effectivedate", "embargo", "embargountil", "publishfrom", "notbefore"), "EffectiveFrom"
    ),
    **dict.fromkeys(
        ("expires", "expiry", "expiration", "expirationdate", "expireson", "expireby", "validto", "notafter"),
        "EffectiveTo",
    ),
}
_NEAR = {"region": "Region", "effectivefrom": "EffectiveFrom", "effectiveto": "EffectiveTo"}
_OWN_NAMES = {**_NEAR, "regions": "Region"}
_DATE_PREFIXES = ("effective", "valid", "expir")
_DATE_ENDS = ("to", "until", "till", "through", "thru", "end", "ends", "expires", "after")
MAX_NAME_WORDS = 4
# A date label that negates or conceals may take more words (`Not to be published before`).
MAX_DATE_NAME_WORDS = 7
MAX_VALUE_WORDS = 6
# The start of a line a label is looked for in: a label is short, a long line is prose.
PREFIX_CHARS = 160
# A date a reader would take for one (ISO, day/month/year, `31 December 2020`, `Dec 31, 2020`):
# after a date field's name it is the field's value, separator or not (`Expires 2020-01-01`).
DATE_FIELDS = ("EffectiveFrom", "EffectiveTo")
DIGIT = re.compile(r"\d|ll")  # a date has a digit other than 1 (which reads `l`), or two
_D = r"[\dl]"  # a digit in canonical form, where `1` reads as its look-alike `l`
_TH = "(?:st|nd|rd|th)?"  # an ordinal's ending (`1st January 2027`, `January 1st, 2027`)
DATE_VALUE = re.compile(
    rf"(?:(?:on|from|after|until|till|through|before)[ \t]+)?(?:{_D}{{4}}[-/.]{_D}{{1,2}}[-/.]{_D}{{1,2}}|{_D}{{1,2}}[-/.]{_D}{{1,2}}[-/.]{_D}{{2,4}}|{_D}{{8}}"
    rf"|{_D}{{1,2}}{_TH}[ \t]+(?:of[ \t]+)?[^\W\d_]{{3,9}}\.?,?[ \t]+{_D}{{4}}"
    rf"|[^\W\d_]{{3,9}}\.?[ \t]+{_D}{{1,2}}{_TH},?[ \t]+{_D}{{4}})(?!\w)"
)


@lru_cache(maxsize=8192)
def name_keys(name: str) -> tuple[str, ...]:
    """The canonical keys of a written name: its canonical forms, letters and digits only. Cached:
    a file's field names repeat on every unit (a 1 MB file of `Claim:` lines asked 222k times)."""
    keys = ["".join(c for c in form if c.isalnum()) for form in canonical_forms(name)]
    # Digits for letters (`Acc3ss`, `4cl`): a key of letters and digits is read with each digit as
    # the letter it stands for (`1` as `i` and as `l`).
    keys += [key.translate(table) for key in keys if _LETTERED.search(key) for table in _DIGITS_READ]
    return tuple(dict.fromkeys(keys))


_LETTERED = re.compile(r"[^\W\d_]\d|\d[^\W\d_]")
_DIGITS_READ = (str.maketrans("0134578", "oieastb"), str.maketrans("0134578", "oleastb"))


def fold(name: str) -> str:
    return name_keys(name)[0]


@lru_cache(maxsize=8192)
def permission_label(name: str) -> str | None:
    """The permission field (`Acl`, `Region`, `EffectiveFrom`, `EffectiveTo`) a name written at a
    label position with a separator reads like, or None."""
    return _label_of(name)[0]


@lru_cache(maxsize=8192)
def _label_of(name: str) -> tuple[str | None, str]:
    """`permission_label`'s field and what made it one: "name" (its letters), "compound" (one
    token's parts) or a `_phrase` kind ("date", "phrase"); one cache for all three questions."""
    for key in name_keys(name):
        label = _classify(key)
        if label is not None:
            return label, "name"
    for key in name_keys(name):
        if key in GO_LIVE_NAMES or key in SUNSET_NAMES:
            # `Go-live date`, `Sunset`: when a text is shown or taken down, a label before a date
            return ("EffectiveFrom" if key in GO_LIVE_NAMES else "EffectiveTo"), "date"
    label = compound_label(name)
    if label is not None:
        return label, "compound"
    phrase = _phrase(name) if " " in name or "\t" in name else None
    return (None, "") if phrase is None else phrase


# A compound name's parts: one token split at `-`, `_`, `.`, `/` and lower-to-upper case changes
# (words apart are a phrase: "two regions", "no Acl").
_PARTS = re.compile(r"[-_./]+|(?<=[a-z])(?=[A-Z])")
_MAX_PARTS = 3
# A key's prefixes may run longer (`x-amz-meta-region`): a field's name as any of five parts.
_MAX_COMPOUND_PARTS = 5


@lru_cache(maxsize=8192)
def compound_label(name: str, own_names: bool = True) -> str | None:
    """The field a compound name of two or three parts names when one part is an unambiguous name
    or (with `own_names`) a field's own (`data-acl`, `x-acl`, `docRegion`, `acl_v2`): a prefix or
    suffix does not make a label a different name. With `own_names`, an English synonym as the
    first part names the field too: the compound is an attribute of it (`access_level`,
    `Access-Level`, `visibilityScope`), and its value decides (`_english_compound`). A synonym as a
    later part is a modifier's object (`user_group`, `max_tags`): too many keys are made so."""
    parts = _compound_parts(name)
    for index, part in enumerate(parts):
        for key in name_keys(part):
            found = UNAMBIGUOUS.get(key) or (_OWN_NAMES.get(key) if own_names else None)
            if found is None and own_names and index == 0:
                found = SYNONYMS.get(key)
            if found is not None:
                return found
    return None


_FUNCTION_WORDS = PROSE_BEFORE_NAME | PROSE_OPENERS | GOES_ON
# A compound's first word that names its field: a field's word, or `security`, which names the Acl
# only so (`Security Level`, `Security Classification`): alone it is prose's as often (`Security:
# guards at the gate`).
_COMPOUND_LEADS = {**SYNONYMS, **_OWN_NAMES, "security": "Acl"}


def date_phrase(name: str) -> bool:
    """Whether `name` is a date label read from its words (`Embargoed until`): a label only
    before a date."""
    return _label_of(name)[1] == "date"


def english_phrase(name: str) -> bool:
    """Whether `name` is a compound of words named by a field's word (`Access Level`, `Region
    code`)."""
    return _label_of(name)[1] == "phrase"


def _phrase(name: str) -> tuple[str, str] | None:
    """(field, kind) of a name of several words that is none of the names above (`Regi on` and
    `Not after` are names by their letters):

    - "date": a preposition of time after its first word that bounds a period (`Embargoed until`,
      `Hidden until`, `Withdrawn after`, `Available from`, `Not before`), or `on` after a verb's
      base form (`Publish on`; `Posted on`, `Born on` record a day: a past form, read by its
      ending, `-ed`, `-en`, `-n`): the end of the unit's
      period (EffectiveTo) for `until`, `before` …, its start (EffectiveFrom) for `from`, `after`
      …, turned round by a negation or a concealing state before it (`Not before`, `Embargoed
      until`, `Hidden until` start the period, `Withdrawn after` ends it). Either field withdraws
      the unit; the field is the hint's;
    - "phrase": a field's word first, then one or two words that are no function words: the
      compound's head, its last word, names an attribute of the field (`Access Level`,
      `Visibility scope`, `Clearance level`, `Region code`); read like the word alone, its value
      decides (`person_role`: `Group leader: John Smith` names a person)."""
    words = name.split()
    if not 2 <= len(words) <= MAX_DATE_NAME_WORDS:
        return None
    folded = [fold(word) for word in words]
    if (dated := _dated_phrase(folded)) is not None:
        return dated, "date"
    if len(words) > MAX_NAME_WORDS:
        return None
    # The field's word: the first, or the first two (`Visible To Groups`, `Restricted To Group`).
    lead = next((count for count in (2, 1) if "".join(folded[:count]) in _COMPOUND_LEADS and count < len(words)), 0)
    if any(word in _FUNCTION_WORDS for word in folded[lead:-1]):
        return None  # `We stayed until`, `Tour of the regions`: a sentence's words
    for index in range(1, len(folded)):
        word, before = folded[index], folded[:index]
        if (
            word in PERIOD_ENDS
            or word in PERIOD_STARTS
            or (word == "on" and not before[-1].endswith((*PARTICIPLE_ENDINGS, "n")))
        ):
            ends = (word in PERIOD_ENDS) != any(state in NEGATIONS or state in CONCEALING for state in before)
            return ("EffectiveTo" if ends else "EffectiveFrom"), "date"
    field = _COMPOUND_LEADS.get("".join(folded[:lead])) if lead else None
    if (
        field is None
        or len(words) - lead > _MAX_PARTS - 1
        or folded[-1] in _FUNCTION_WORDS
        or not all(word.isalpha() for word in folded[lead:])
    ):
        return None
    return field, "phrase"


# A person's name: up to four capitalised words (`Dr. Jane Doe`, `Anne-Marie O'Neil`), or a list
# of them (`Anna Berg and John Smith`).
_NAME_WORD = r"[A-Z][a-z]*\.?(?:[-'][A-Z]?[a-z]+)?"
_ONE_PERSON = rf"[A-Z][a-z]+\.?(?:[-'][A-Z]?[a-z]+)?(?:[ \t]+{_NAME_WORD}){{0,3}}"
_PERSON_NAME = re.compile(rf"{_ONE_PERSON}(?:(?:[ \t]*,[ \t]*|[ \t]*,?[ \t]+(?:and|&)[ \t]+){_ONE_PERSON})*")


def person_role(name: str, written: str) -> bool:
    """Whether a compound `name` (`english_phrase`) and its value as `written` name a person, not a
    field: the head is an agent noun (`leader`, `supervisor`, `trainee`: AGENT_ENDINGS, plural
    too) and the value a person's name, capitalised words (`Group leader: John Smith`). A typed
    decision that fails closed: `Group leader: staff` withdraws, and so does `Access Level: Staff
    Only` (`level` is no agent)."""
    head = fold(name.split()[-1]).removesuffix("s")
    value = _VALUE_END.split(written.strip(" \t*_`~"), 1)[0].rstrip(" .")
    return head.endswith(AGENT_ENDINGS) and _PERSON_NAME.fullmatch(value) is not None


_DATE_KEYS = tuple(
    key for key, field in {**UNAMBIGUOUS, **SYNONYMS}.items() if field in ("EffectiveFrom", "EffectiveTo")
)


def _dated_phrase(folded: list[str]) -> str | None:
    """The date field of a name that is no compound of a field's word but reads as one:

    - the stem of a date field's name, then the noun `date` (`Publish date`, from `publishfrom`;
      `Embargo date`): the day the field names;
    - an instruction of up to `MAX_DATE_NAME_WORDS` words that negates or conceals and ends with
      a preposition of time (`Not to be published before`, `Do not show this page before`): its
      words are a sentence's, so only its negation and its last word decide. A statement (`It
      must never be retrieved after`, opening with a pronoun or an article) tells about a text."""
    # A stem of five letters or more: `Not date` is no name.
    if len(folded) == 2 and folded[1] == "date" and len(folded[0]) >= 5:
        return next((_field_of(key) for key in _DATE_KEYS if key.startswith(folded[0])), None)
    if (
        len(folded) <= MAX_NAME_WORDS
        or not STATEMENT_OPENERS.isdisjoint((folded[0], folded[0].replace("l", "i")))  # `l` may be `I`
        or not any(word in NEGATIONS or word in CONCEALING for word in folded[:-1])
    ):
        return None
    if folded[-1] in PERIOD_ENDS:
        return "EffectiveFrom"  # the negation turns the end round: `Not … before` starts the period
    return "EffectiveTo" if folded[-1] in PERIOD_STARTS else None


def _field_of(key: str) -> str:
    return UNAMBIGUOUS.get(key) or SYNONYMS[key]


def _english_compound(name: str) -> bool:
    """Whether `name` is a compound named by its first part, an English synonym of `Acl`,
    `EffectiveFrom` or `EffectiveTo` (`access_level`): a label only when a value follows, as the
    synonym alone is."""
    parts = _compound_parts(name)
    return bool(parts) and any(SYNONYMS.get(key, "Region") != "Region" for key in name_keys(parts[0]))


@lru_cache(maxsize=8192)
def _compound_parts(name: str) -> tuple[str, ...]:
    """A compound name's two to five parts, or () for a name that is none."""
    parts = tuple(part for part in _PARTS.split(name) if part)
    if not 2 <= len(parts) <= _MAX_COMPOUND_PARTS or any(char.isspace() for char in name):
        return ()
    return parts


def _classify(key: str) -> str | None:
    if not key or not key[0].isalpha():
        return None
    found = UNAMBIGUOUS.get(key) or SYNONYMS.get(key)
    if found is not None:
        return found
    if key.startswith(_DATE_PREFIXES):
        return "EffectiveTo" if key.endswith(_DATE_ENDS) else "EffectiveFrom"
    for near, label in _NEAR.items():
        if one_edit(key, near):
            return label
    return None


def english_name(name: str) -> bool:
    """Whether `name` is an English synonym of a field (`SYNONYMS`: `Access`, `Expires`), not a
    field's own name (`Region`): a label only where its place and its value say so."""
    return any(key in SYNONYMS and key not in _OWN_NAMES for key in name_keys(name))


@lru_cache(maxsize=8192)
def bare_label(name: str) -> str | None:
    """The field an unambiguous name stands for with no separator after it."""
    for key in name_keys(name):
        found = UNAMBIGUOUS.get(key)
        if found is None and len(key) > 6:
            found = next((label for near, label in _NEAR.items() if len(near) > 6 and one_edit(key, near)), None)
        if found is not None:
            return found
    return compound_label(name, own_names=False)  # `data-acl`, not `sub-region`


def one_edit(word: str, target: str) -> bool:
    """Whether `word` is `target` with one letter inserted, deleted, replaced, or two adjacent
    letters swapped (Damerau-Levenshtein distance 1)."""
    if word == target or abs(len(word) - len(target)) > 1:
        return False
    if len(word) == len(target):
        diffs = [i for i, (a, b) in enumerate(zip(word, target)) if a != b]
        return len(diffs) == 1 or (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and word[diffs[0]] == target[diffs[1]]
            and word[diffs[1]] == target[diffs[0]]
        )
    short, long = sorted((word, target), key=len)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def typed_value(name: str, value: str, weak: bool, prose_check: bool = False) -> bool:
    """Whether `value`, after `name` and its separator, reads as a permission field's value. An
    unambiguous name takes any value; so does a field's own name after `:`/`=`. An English word
    (`Access`, `Audience`, `Expires`) is a label unless what follows is prose: opening with an
    article, pronoun or preposition, or longer than a short value. After a weak separator (a dash,
    an arrow, a tab) the value must also have the field's type: tags (`staff, support:eu`), a
    region of at most three words, a date. A weak separator needs a value after it; a colon does
    not (`Acl:` at the end of a line, its value on the next). The value is its sentence's (`Region
    - EU. The vault …`), or the whole rest when that reads as one (`Expires - Jan. 5, 2020`)."""
    sentence = _VALUE_END.split(value, 1)[0]
    return _typed(name, sentence, weak, prose_check) or (sentence != value and _typed(name, value, weak, prose_check))


# The end of a value's sentence: another sentence follows it.
_VALUE_END = re.compile(r"(?<=[.!?])[\"')\]]*[ \t]+(?=\S)")


_TAG_LETTER = re.compile(r"[^\W\dl_]")


def _typed(name: str, value: str, weak: bool, prose_check: bool) -> bool:
    words = value.strip(" \t*_`~").split()
    if not words:
        return not weak
    if bare_label(name) is not None:
        return True
    label = permission_label(name)
    if date_phrase(name):
        return ends_with_date(canonical_forms(" ".join(words))[0], 0)
    synonym = any(key in SYNONYMS and SYNONYMS[key] != "Region" for key in name_keys(name)) or (
        label is not None and (_english_compound(name) or english_phrase(name))
    )
    if not weak and not prose_check and not synonym:
        return True  # `Region:`, a near miss of a field's name (`Regoin:`), `Effective-Date:` …
    opener = words[0].strip("\"'([{").casefold()
    if label in DATE_FIELDS and ends_with_date(canonical_forms(" ".join(words))[0], 0):
        return True  # `Effective: from 2027-01-01`: a date after its preposition
    if opener in PROSE_OPENERS or opener in PROSE_BEFORE_NAME or len(words) > MAX_VALUE_WORDS:
        return False
    phrase = english_phrase(name)
    if not weak and not phrase:
        return True
    if label == "Acl":
        # A compound's value is a tag of a word or two (`Staff Only`, `Top Secret`) with a letter
        # (not `l`, which `1` reads as): `Group size: 12`, `Access road: closed in winter` say
        # something else.
        most = 2 if phrase else 1
        items = " ".join(words).split(",")
        return all(0 < len(item.split()) <= most and (not phrase or _TAG_LETTER.search(item)) for item in items)
    if label == "Region":
        return len(words) <= 3
    return ends_with_date(canonical_forms(" ".join(words))[0], 0)


def ends_with_date(form: str, at: int) -> bool:
    """Whether `form` holds a date at `at` and nothing after it but closing punctuation."""
    date = DATE_VALUE.match(form, at)
    return date is not None and not form[date.end() :].strip(" \t.,;*_`~)]")


def blank_end(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t*_`~":
        at += 1
    return at
