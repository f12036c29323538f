"""The readings of a line a screen shows differently from how it is stored (docs/security.md, "The
permission-label grammar"): a right-to-left override's run reversed, markup rendered; and letters
spaced out at a label position closed up, as a reader reads them (`closed_up`). The label finders
(core/cnl/permissions.py) read such a line as stored and as shown.
"""

from __future__ import annotations

import html
import re

from core.cnl.permission_names import english_name, permission_label

# U+202E RIGHT-TO-LEFT OVERRIDE shows the letters after it reversed, up to U+202C or U+2069 (or
# the line's end): `\u202effats :lcA` reads `Acl: staff` on screen. A line holding one is read
# in the order it is shown as well as in the order it is stored.
_RIGHT_TO_LEFT_OVERRIDE = "\u202e"
_OVERRIDDEN = re.compile("\u202e([^\u202c\u2069]*)")


# Markup a renderer turns into other characters: a character reference (`&#58;` is `:`), a tag
# (`<b>Acl</b>: staff`, `Region<sup>:</sup> EU`), emphasis inside a word (`*Re*gion`). A line
# holding any is read as stored and as rendered.
_ENTITY = re.compile(r"&#?\w{1,8};")
_TAG = re.compile(r"<[A-Za-z/][^>\n]{0,200}>")
_INNER_EMPHASIS = re.compile(r"(?<=\w)[*~]+(?=\w)")
# Markup languages' own forms of a name and its value: a TeX command (`\region{EU}`), a wiki
# template's parameter (`{{region|EU}}`); each shows as `region: EU` (a git-config section,
# `[region "EU"]`, is a line's: core/cnl/permissions.py).
_NAMED_MARKUP = re.compile(r"\\([A-Za-z]+)\{([^{}\n]*)\}|\{\{[ \t]*([^|{}\n]+?)[ \t]*\|([^{}\n]*)\}\}")
# A tag holding one of HTML's name/value attribute pairs states a field (`<meta name="region"
# content="EU">`, `property`/`itemprop`/`http-equiv` for `name`; `<param name=… value=…>`): it is
# rendered as `region="EU"`, which reads as `data-acl="staff"` does. Any other tag shows nothing.
# `http-equiv` names an HTTP header, and HTTP's own headers that are English words (`Expires`, a
# cache's date) are not the unit's: there only a name that is no English synonym is a label.
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)[ \t]*=[ \t]*("[^"]*"|'[^']*'|[^\s"'=<>`]+)""")
_NAMING = ("name", "property", "itemprop", "http-equiv")
_VALUED = ("content", "value")


# Letters spaced out at a label position (`R e g i o n : EU`, `A C L: hr`) read as one word: three
# or more single letters, each one or two blanks (a no-break or thin space too) from the next.
_SPACED = re.compile(r"[^\W\d_](?:[ \t\u00a0\u2000-\u200b\u202f\u3000]{1,2}[^\W\d_]){2,}(?![^\W_])")
_BLANKS = re.compile(r"[ \t\u00a0\u2000-\u200b\u202f\u3000]+")


def closed_up(text: str) -> str | None:
    """`text` with the letters spaced out at its start closed up (`Region : EU`), or None when it
    starts with none. Only a label position's text is read so: a match at its start costs what the
    run is long, where a search of every text was a sixth of NFCorpus's reading."""
    run = _SPACED.match(text)
    return None if run is None else _BLANKS.sub("", run.group()) + text[run.end() :]


def readings(line: str) -> list[str]:
    """`line` as stored, and as shown when that differs: U+202E's run reversed, markup rendered;
    then each further line a block tag starts (`<tr>`, `<p>`, `<li>` …), a line start of its own
    (`BLOCK_LINES`: readings from that index on). Columns of a finding in a shown text are that
    text's."""
    stored = line.replace(_RIGHT_TO_LEFT_OVERRIDE, "")
    shown = _OVERRIDDEN.sub(lambda run: run.group(1)[::-1], line)
    if _markup(shown):
        shown = _HEADER_ROW_END.sub(DELIMITER_LINE, html.unescape(shown))
        shown = _INNER_EMPHASIS.sub("", _TAG.sub(_rendered_tag, shown))
        shown = _NAMED_MARKUP.sub(_named_pair, shown)
    if shown == stored:
        return [stored]
    if "\n" not in shown:
        return [stored, shown]
    # The text before the first block tag goes on from the text before it: not a line's start.
    first, *blocks = shown.split("\n")
    return [stored, " ".join([first, *blocks]), *filter(str.strip, blocks)]


BLOCK_LINES = 2
# A row of header cells (`<tr><th>Region</th><th>Population</th></tr>`) ends over a line a
# Markdown table has there, its delimiter row: a header is then read as Markdown's is
# (core/cnl/permission_tables.py, `header_row`), a header of columns over rows of values.
_HEADER_ROW_END = re.compile(r"</th>[ \t]*(?:</tr>)?(?=[ \t]*(?:<tr\b|</?thead\b|<tbody\b|</table\b|\Z))", re.I)
DELIMITER_LINE = r"\g<0>" "\n|---|\n"


# Tags a renderer shows as a line's start (a table row, a paragraph, a list item …), as a
# table's cell (`<tr><td>Region</td><td>EU</td></tr>` shows the row `| Region | EU |`) and as a
# term's definition (`<dt>Region</dt><dd>EU</dd>` reads `Region: EU`). A header cell (`<th>`)
# is a cell too: `<tr><th>Region</th><th>EU</th></tr>` over a row of data is a name and its value
# as often as two columns' names (core/cnl/permission_tables.py, `header_row`). An element named
# as a field (`<region>EU</region>`, pasted XML) reads as that field's pair (`region=EU`).
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9]*)")
_BLOCKS = frozenset("tr p br li div dt h1 h2 h3 h4 h5 h6 table tbody thead caption pre blockquote".split())


def _rendered_tag(tag: re.Match[str]) -> str:
    """What a tag shows as read for a label: a line break for a block, a bar for a table cell, its
    name/value attribute pair as `name="value"`, else nothing."""
    closing, name = _TAG_NAME.match(tag.group()).groups()  # type: ignore[union-attr]
    name = name.casefold()
    if name in _BLOCKS:
        return "" if closing and name == "dt" else "\n"  # a term reads on with its definition
    if name in ("td", "th", "dd"):
        return "" if closing else {"td": " | ", "th": " | ", "dd": ": "}[name]
    if permission_label(name) is not None:
        # An XML element named as a field holds its value (`<region>EU</region>`), as an
        # attribute does (`region="EU"`).
        return " " if closing else f" {name}="
    attributes: dict[str, str] = {}
    for name, value in _ATTRIBUTE.findall(tag.group()):
        attributes.setdefault(name.casefold(), value[1:-1] if value[0] in "\"'" else value)
    naming = next((key for key in _NAMING if key in attributes), None)
    valued = next((attributes[key] for key in _VALUED if key in attributes), None)
    if naming is None or valued is None or (naming == "http-equiv" and english_name(attributes[naming])):
        return ""
    return f' {attributes[naming]}="{valued}" '


def _named_pair(markup: re.Match[str]) -> str:
    name, value = (group for group in markup.groups() if group is not None)
    return f" {name}: {value} "


def shown_differently(line: str) -> bool:
    return _RIGHT_TO_LEFT_OVERRIDE in line or _markup(line)


def _markup(line: str) -> bool:
    # `in` tests first: most lines hold none of markup's characters (decided at C speed).
    return bool(
        ("&" in line and _ENTITY.search(line))
        or ("<" in line and _TAG.search(line))
        or (("*" in line or "~" in line) and _INNER_EMPHASIS.search(line))
        or ("{" in line and _NAMED_MARKUP.search(line))
    )
