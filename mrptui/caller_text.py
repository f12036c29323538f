"""A caller from the text a person types: the CLI's `--caller-tags a,b --region R --as-of DATE` and the
explorer's caller window read it the same way, and refuse the same things."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import ValidationError

from core.units import Caller


class CallerError(ValueError):
    """`field` "as_of": `messages` holds the text that is not a date; "identity": why a tag or the region is refused."""

    def __init__(self, field: Literal["as_of", "identity"], messages: tuple[str, ...]) -> None:
        super().__init__("; ".join(messages))
        self.field = field
        self.messages = messages


def parse_caller(tags: str, region: str | None, as_of: str | None, today: dt.date) -> Caller:
    """Tags are split on commas and each stripped of surrounding spaces; anything else (an inner
    space, "|", an invisible or non-NFKC character) is refused, never repaired. No as-of: `today`."""
    date = today
    if as_of and as_of.strip():
        try:
            date = dt.date.fromisoformat(as_of.strip())
        except ValueError:
            raise CallerError("as_of", (as_of,)) from None
    try:
        return Caller(
            tags=frozenset(t.strip() for t in (tags or "").split(",") if t.strip()),
            region=region or None,
            as_of=date,
        )
    except ValidationError as exc:
        # pydantic prefixes a validator's own message with "Value error, ": the person reads ours.
        reasons = tuple(str(err["msg"]).removeprefix("Value error, ") for err in exc.errors())
        raise CallerError("identity", reasons) from None
