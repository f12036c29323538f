"""An LLM's answer text read into the parts of an answer: the one place text from outside is parsed.

Our own solvers build an answer's parts and write its text from them (`Draft.led`); an LLM
writes only text, so its lead is read from it here, by the form our answers take ("LEAD,
because: …"), for the validator's support check.
"""

from __future__ import annotations

_BECAUSE = ", because:"


def lead_of(answer: str) -> str:
    """The lead an answer "LEAD, because: …" states; "" when it has none."""
    return answer.split(_BECAUSE, 1)[0].strip() if _BECAUSE in answer else ""
