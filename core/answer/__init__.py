"""The answer stages: evidence sentences, references, candidate spans, support, choice, rendering."""
