"""Questions asked of the reader ("Can you name two services?", "Do you know what Orionctl
uses?"): what they ask for is the request or the question inside them.

Read as written, an auxiliary opening the sentence makes it a yes/no question about "you", and
the evidence that says what the inner question asks turned into "Yes" (or "No"). The grammar of
the two shapes is English's, not a document's: an auxiliary, the subject "you", then either a
request verb the planner already reads as a question opener ("name", "list", "tell", ...) or any
verb whose object is a wh-clause ("know what", "tell me where"). A "you" asked about something
else ("Can you park on the street?") keeps its yes/no reading.
"""

from __future__ import annotations

from core.text.words import AUXILIARIES, OBJECT_PRONOUNS, QUESTION_OPENERS, WH_WORDS

_EDGE = ",.?!;:"


def inner_question(sentence: str) -> str | None:
    """The request or question a question to the reader asks, written as one of the planner's
    questions ("Name two services.", "What Orionctl uses?"); None for any other sentence."""
    words = sentence.split()
    bare = [w.lower().strip(_EDGE) for w in words]
    if len(words) < 4 or bare[0] not in AUXILIARIES or bare[1] != "you":
        return None
    verb = 3 if bare[2] == "please" else 2
    if verb + 1 >= len(words):
        return None
    # The wh-clause first: it is the question itself, where "Tell me what ..." only wraps it.
    after = verb + 1 + (bare[verb + 1] in OBJECT_PRONOUNS)
    if after + 1 < len(words) and bare[after] in WH_WORDS:
        return _written(words[after:], "?")
    if bare[verb] in QUESTION_OPENERS and bare[verb] not in WH_WORDS:
        return _written(words[verb:], ".")
    return None


def _written(words: list[str], mark: str) -> str:
    text = " ".join(words).rstrip(_EDGE)
    return text[0].upper() + text[1:] + mark
