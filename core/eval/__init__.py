"""Evaluation: labelled queries, BEIR collections, SQuAD 2.0."""
