"""The question, analysed once per run (core/question/question.py) and the terms it names (terms.py)."""

from core.question.question import Question, Questions

__all__ = ["Question", "Questions"]
