"""Follow-up questions: what a question leaves out ("she", "their", "the same fee", "And Helix?",
"Why?") is completed from the conversation, and the intent says so, or says why it was not.

    "Who maintains it?"     + record about Orion       → "Who maintains Orion?"
    "And Helix?"            + "Who maintains Orion?"   → "Who maintains Helix?"
    "Do juniors pay the same fee?" + "How much is the annual fee?" → "Do juniors pay the annual fee?"

A pronoun is replaced only by a mention that agrees with it and is likely enough
(core/memory/referents.py); "the same X" only by an earlier X; an elliptical follow-up reuses the
last question's frame only when that frame is complete (it has no pronoun left unresolved, and a
slot of X's kind). Only the caller's own records are offered (core/memory/conversation.py), already
scored; a record below `minScore` is never used. Nothing is guessed when no record qualifies.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.memory.followup_cues import ELLIPSIS, SAME, WHY, Candidate, Resolution, pronoun_groups
from core.nlp.tagging import tag_text


def refers_back(question: str) -> bool:
    """The question leaves something to the conversation: a third-person pronoun, an elliptical
    frame ("And X?", "What about X?"), a bare "Why?" or "the same X". A question with none of
    these, and with a verb of its own, stands alone whatever was asked before it; one without a
    verb ("On what date?", "How many?") is a fragment of the conversation."""
    if pronoun_groups(question) or ELLIPSIS.match(question) or WHY.match(question) or SAME.search(question):
        return True
    return not any(t.tag in ("VERB", "AUX") for t in tag_text(question))


def resolve(question: str, candidates: Sequence[Candidate], min_score: float, before: Sequence[str] = ()) -> Resolution:
    """`question` with what it leaves out filled in from the candidates at or above `min_score`;
    `before`: the questions asked earlier in the same input ("Why was X …? What made him …?")."""
    usable = [c for c in candidates if c.score >= min_score]
    if not usable and not before:
        return Resolution(question)
    # Imported only now: a question with nothing to complete it from (no session, the input's
    # first question) needs none of the mention finder's modules (issue 41).
    from core.memory.completion import complete

    return complete(question, usable, before)
