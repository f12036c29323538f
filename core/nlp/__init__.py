"""Linguistic tools with shipped data: a UPOS tagger, noun-phrase chunks and an OEWN lexicon.

Every model loads lazily, once per process, on first use (core.nlp.lazy). Data and licences:
docs/nlp.md and NOTICE.
"""
