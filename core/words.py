"""Closed classes of English words that no tagger or lexicon gives as a class.

Only words of a closed class belong here (no new ordinal enters the language); anything the
tagger's UPOS tags, the noun-phrase chunks or the WordNet lexicon can tell is read from them.
"""

from __future__ import annotations

# Ordinals that pick one of a recurring series ("the second Tuesday", "the first Saturday of
# September"): the tagger calls them ADJ like any adjective, and WordNet files them under no
# common class.
ORDINALS = frozenset(
    """first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth last final next""".split()
)
# Words that join the items of a coordination ("£35 for full members and £15 for juniors").
COORDINATORS = frozenset(("and", "or"))
