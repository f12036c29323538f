"""Conversation memory (seed 001): records of earlier turns and pinned notes, scored by similarity,
recency, scope and summary quality, packed into a token budget and compacted into summaries.

Memory never becomes KB units: a record keeps the question, the answer's lead and the ids and content
digests of the units it cited, and is reused only while every cited unit is in that caller's view
with that digest (core/memory/cited.py).
"""
