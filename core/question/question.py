"""`Question`: one question analysed once, read by every stage of a run.

The kernel makes one `Questions` per run and hands it to every plugin on `RunContext`; a plugin
asks it for the Question of its intent's target (`ctx.question(intent)`), so the planner, the seed
detector, the kb plugins, the goal solver and the validator all read the same analysis instead of
each deriving its own. Each part is worked out on first use and kept: a keyword question that
no solver tags costs no tagging.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from core.nlp.tagging import Token, tag_text
from core.question.answer_types import AnswerType, Expected, expected_type
from core.question.intent_cues import QuestionCues, question_cues
from core.question.relation import Relation, asked_relation
from core.question.terms import Term, question_terms
from core.text.tokenizer import tokenize
from core.units import Act


@dataclass(frozen=True, eq=False)
class Question:
    """The question's text and what is read from it: its tagged words (`tokens`), their stems,
    the planner's cues (act, output shape, focus words), the answer type its wording asks for
    (`expected`), the role the answer plays for its main verb (`relation`) and the terms the
    evidence must say (`terms`)."""

    text: str

    @cached_property
    def tokens(self) -> tuple[Token, ...]:
        return tag_text(self.text)

    @cached_property
    def stems(self) -> frozenset[str]:
        """Every stem of the question's words: what a lead must not merely repeat."""
        return frozenset(s for t in self.tokens for s in tokenize(t.word))

    @cached_property
    def cues(self) -> QuestionCues:
        return question_cues(self.text)

    @cached_property
    def expected(self) -> Expected:
        return expected_type(self.text)

    @cached_property
    def relation(self) -> Relation | None:
        return asked_relation(self.tokens)

    @cached_property
    def terms(self) -> tuple[Term, ...]:
        return tuple(question_terms(self.text, self.cues))

    def expected_for(self, act: Act) -> Expected:
        """What the answer is under the intent's act: a question setting two things against each
        other asks for a comparison, unless its wording asks for a list or a yes or no."""
        if act is Act.COMPARE and len(self.cues.compared) >= 2:
            return comparison_of(self.expected)
        return self.expected

    def required_terms(self, expected: Expected) -> list[Term]:
        """The terms the evidence must say: the class noun of "which X" names the answer's kind,
        and form words ("how *many*") shape it, so the sentence need not repeat them. Nor need
        it repeat a pronoun the stopwords let through, wherever the question has it ("In *whose*
        hands?", "How long before *someone* would arrive?")."""
        # A pronoun stands for the thing asked about, or for anyone. (Determiners and prepositions
        # name something: "*another* name for X", "one *per* nation" were answered, on CoQA, from
        # sentences without them when they were let go too.)
        pronouns = {t.word.lower() for t in self.tokens if t.tag == "PRON"}
        pronouns -= {t.word.lower() for t in self.tokens if t.tag != "PRON"}
        return [t for t in self.terms if not is_head(t, expected) and (t.is_name or t.word.lower() not in pronouns)]


def comparison_of(expected: Expected) -> Expected:
    """A comparison, where the wording asked for neither a list nor a yes or no."""
    if expected.type in (AnswerType.LIST, AnswerType.YES_NO):
        return expected
    return Expected(AnswerType.COMPARISON)


def is_head(term: Term, expected: Expected) -> bool:
    shaping = {s for word in (expected.head, *expected.form_words) for s in tokenize(word)}
    return bool(shaping) and set(term.stems) <= shaping


@dataclass
class Questions:
    """The Questions of one run by text: a sub-question or an intent edited in the debugger is
    analysed once too, and every stage that reads it gets the same one."""

    _by_text: dict[str, Question] = field(default_factory=dict)

    def of(self, text: str) -> Question:
        question = self._by_text.get(text)
        if question is None:
            question = self._by_text[text] = Question(text)
        return question
