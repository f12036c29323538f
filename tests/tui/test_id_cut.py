"""Ids cut to a column's width stay distinct within the table (issue 39: `mdba::c…unit-000` twice)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from mrptui.widgets.id_cut import ELLIPSIS, unique_cut

# A hive-inspection KB: ids alike at both ends, told apart only in the middle.
HIVES = ["mdba::chunk-012::unit-000", "mdba::chunk-013::unit-000", "mdba::chunk-013::unit-001"]


def test_ids_alike_at_both_ends_keep_the_part_that_tells_them_apart() -> None:
    cut = unique_cut(HIVES, 16)
    shown = [cut.apply(ident) for ident in HIVES]
    assert len(set(shown)) == 3 and all(ELLIPSIS in s and len(s) == 16 for s in shown), shown


def test_the_even_cut_is_kept_when_it_already_tells_ids_apart() -> None:
    ids = ["orion-stack::chunk-002::unit-007", "orion-stack::chunk-002::unit-008"]
    assert [unique_cut(ids, 16).apply(i) for i in ids] == ["orion-s…unit-007", "orion-s…unit-008"]


def test_when_no_cut_of_the_width_tells_them_apart_the_column_widens() -> None:
    ids = ["a-x-middle-one-x-z", "a-y-middle-one-y-z", "a-x-middle-two-y-z"]
    cut = unique_cut(ids, 4)
    assert cut.width > 4 and len({cut.apply(i) for i in ids}) == 3


@given(
    st.lists(st.text(alphabet="ab:-0", min_size=1, max_size=24), min_size=1, max_size=30),
    st.integers(min_value=2, max_value=30),
)
def test_any_ids_at_any_width_stay_distinct_and_every_cut_one_says_so(ids, width) -> None:
    cut = unique_cut(ids, width)
    shown = {ident: cut.apply(ident) for ident in set(ids)}
    assert len(set(shown.values())) == len(shown)
    assert all(s == i or s.count(ELLIPSIS) == 1 for i, s in shown.items())


def test_a_cited_id_wider_than_the_answer_pane_is_cut_not_broken_in_the_middle() -> None:
    from mrptui.widgets.answer import fit_citations

    cited = ("orion-stack::chunk-001::unit-003", "orion-stack::chunk-002::unit-007", "faq")
    text = (
        "Orion uses Helix [orion-stack::chunk-001::unit-003]; it is private [orion-stack::chunk-002::unit-007] [faq]."
    )
    shown = fit_citations(text, cited, 28)
    inside = re.findall(r"\[([^\]]*)\]", shown)
    assert len(inside) == 3 and inside[2] == "faq"
    assert all(len(i) <= 25 for i in inside) and "…" in inside[0]
    assert inside[0] != inside[1]  # the cut keeps the part that tells them apart
    assert fit_citations(text, cited, 0) == text
