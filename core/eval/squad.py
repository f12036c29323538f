"""SQuAD 2.0 reading comprehension: the engine's offline answers scored as the official evaluation
scores them, with abstention (status not grounded, or a refusal) as the empty prediction.

Reads the official JSON (`{"data": [{"title", "paragraphs": [{"context", "qas": [...]}]}]}`) or
the JSONL layout of `../shared/qa/squad2-dev` (`questions.jsonl` + `articles/<slug>.txt`). Every
article is its own KB, as `# Title` and its paragraphs, one block each (the layout's rule, so an
official file and its JSONL copy give the same KB). Each question is answered by `Session.run`
for the public caller, the run `mrptui ask` makes. The numbers follow
`../shared/qa/squad2-dev/judge.py` (its docstring defines them), and agree with it on the same
sample: the same stratified sampling, the same lead (core/eval/answer_checks.py), the same scores
(the report: core/eval/squad_report.py).
"""

from __future__ import annotations

import random
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.eval.answer_checks import abstained, best_scores, contains_gold, lead_of
from core.infra.config import ConfigError, read_json
from core.infra.diagnostics import Code, Diagnostic
from core.infra.json_limits import NotUtf8, decode_utf8
from core.infra.json_locate import jsonl_records, position
from core.infra.safe_io import UnsafePath, read_regular
from core.kernel.contract import Request
from core.kernel.events import AnswerReady
from core.text.words import QUESTION_TYPE_AUXILIARIES
from core.units import Caller

if TYPE_CHECKING:
    from core.kernel.session import Session

# The official train file is 42 MB; a questions file past these is refused, not read.
MAX_SQUAD_BYTES = 256_000_000
MAX_ARTICLE_BYTES = 16_000_000
# At most this many problems are listed for a malformed file (each locates its line).
MAX_PROBLEMS = 20
Progress = Callable[[int, int], None]
OpenSession = Callable[[Path], "Session"]


# --- reading --------------------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class _Answer(_Model):
    text: str


class _Qa(_Model):
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answers: tuple[_Answer, ...] = ()
    is_impossible: bool = False


class _Paragraph(_Model):
    context: str
    qas: tuple[_Qa, ...]


class _Article(_Model):
    title: str = Field(min_length=1)
    paragraphs: tuple[_Paragraph, ...]


class SquadJson(_Model):
    data: tuple[_Article, ...]


class SquadQuestion(BaseModel):
    """One question; also a line of the JSONL layout, whose fields it has exactly (a misspelt
    "is_imposible" must not make a question answerable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    article: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answers: tuple[str, ...]
    is_impossible: bool


@dataclass(frozen=True)
class SquadSet:
    """A SQuAD-style set read for evaluation: its questions and the KB text of its articles."""

    name: str
    questions: tuple[SquadQuestion, ...]
    # Article slug -> its KB text (`# Title`, blank line, paragraphs as blocks).
    articles: dict[str, str]
    # Article slug -> the file it was read from (the JSONL layout); absent for the official JSON.
    files: dict[str, Path]


def slug(title: str) -> str:
    """`Fresno,_California` -> `fresno-california`: lower case, each run of non-alphanumerics a dash."""
    return re.sub(r"[^0-9a-z]+", "-", title.lower()).strip("-")


def article_text(title: str, paragraphs: Iterable[str]) -> str:
    """The layout's KB text: each run of whitespace holding a line break becomes one space, so a
    paragraph is exactly one block."""
    blocks = [re.sub(r"\s*\n\s*", " ", p).strip() for p in paragraphs]
    return "\n\n".join([f"# {title.replace('_', ' ')}", *blocks]) + "\n"


def load_squad(path: Path) -> SquadSet:
    """A SQuAD 2.0 file (official JSON) or folder (JSONL layout). Raises ConfigError with file and
    line for anything malformed."""
    if path.is_dir():
        return _load_layout(path)
    if path.is_file():
        return _load_official(path)
    raise ConfigError([Diagnostic(code=Code.PATH_NOT_FOUND, message="no SQuAD file or folder here", file=str(path))])


def _load_official(path: Path) -> SquadSet:
    data = read_json(path, MAX_SQUAD_BYTES)
    try:
        official = SquadJson.model_validate(data)
    except ValidationError as exc:
        text = path.read_text(encoding="utf-8")
        raise ConfigError([_located(path, text, err) for err in exc.errors()[:MAX_PROBLEMS]]) from None
    questions: list[SquadQuestion] = []
    articles: dict[str, str] = {}
    for article in official.data:
        name = slug(article.title)
        if name in articles or not name:
            raise ConfigError(
                [_problem(path, 1, f"article title {article.title!r} gives the slug {name!r} twice or empty")]
            )
        articles[name] = article_text(article.title, (p.context for p in article.paragraphs))
        questions += [
            SquadQuestion(
                id=qa.id,
                article=name,
                question=qa.question,
                answers=tuple(a.text for a in qa.answers),
                is_impossible=qa.is_impossible,
            )
            for paragraph in article.paragraphs
            for qa in paragraph.qas
        ]
    _check_ids(path, questions)
    return SquadSet(path.stem, tuple(questions), articles, {})


def _load_layout(folder: Path) -> SquadSet:
    path = folder / "questions.jsonl"
    if not path.is_file():
        raise ConfigError([Diagnostic(code=Code.PATH_NOT_FOUND, message="missing questions.jsonl", file=str(path))])
    text = _read_text(path, MAX_SQUAD_BYTES)
    questions: list[SquadQuestion] = []
    problems: list[Diagnostic] = []
    files: dict[str, Path] = {}
    for number, record in jsonl_records(text, SquadQuestion, str(path)):
        if isinstance(record, Diagnostic):
            problems.append(record)
            continue
        article = folder / "articles" / f"{record.article}.txt"
        if record.article not in files:
            if slug(record.article) != record.article or not article.is_file():
                problems.append(
                    _problem(path, number, f"no article file articles/{record.article}.txt", Code.UNKNOWN_REFERENCE)
                )
                continue
            files[record.article] = article
        questions.append(record)
        if len(problems) >= MAX_PROBLEMS:
            break
    if problems:
        raise ConfigError(problems)
    _check_ids(path, questions)
    articles = {name: _read_text(file, MAX_ARTICLE_BYTES) for name, file in files.items()}
    return SquadSet(folder.resolve().name, tuple(questions), articles, files)


def _read_text(path: Path, max_bytes: int) -> str:
    try:
        return decode_utf8(read_regular(path, max_bytes))
    except NotUtf8 as exc:
        raise ConfigError(
            [Diagnostic(code=Code.INVALID_ENCODING, message=str(exc), file=str(path), line=exc.line, col=exc.col)]
        ) from None
    except (UnsafePath, OSError) as exc:
        raise ConfigError([Diagnostic(code=Code.FILE_UNREADABLE, message=str(exc), file=str(path))]) from None


def _check_ids(path: Path, questions: Sequence[SquadQuestion]) -> None:
    repeated = [qid for qid, count in Counter(q.id for q in questions).items() if count > 1]
    if repeated:
        raise ConfigError([_problem(path, 1, f"{len(repeated)} question id(s) repeated, e.g. {repeated[0]!r}")])
    if not questions:
        raise ConfigError([_problem(path, 1, "no questions")])


def _problem(path: Path, line: int, message: str, code: Code = Code.INVALID_CONFIG) -> Diagnostic:
    return Diagnostic(code=code, message=message, file=str(path), line=line)


def _located(path: Path, text: str, err) -> Diagnostic:
    loc = tuple(err["loc"])
    line, col = position(text, loc)
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".") or "<root>"
    return Diagnostic(code=Code.INVALID_CONFIG, message=f"{where}: {err['msg']}", file=str(path), line=line, col=col)


# --- sampling -------------------------------------------------------------------------------------


def sample(questions: Sequence[SquadQuestion], limit: int, seed: int) -> list[SquadQuestion]:
    """judge.py's sample: `limit` 0 takes every question (by id); otherwise limit // 2 answerable
    and the rest impossible, each drawn with random.Random(seed) from its questions sorted by id."""
    if limit <= 0:
        return sorted(questions, key=lambda q: q.id)
    rng = random.Random(seed)
    answerable = sorted((q for q in questions if not q.is_impossible), key=lambda q: q.id)
    impossible = sorted((q for q in questions if q.is_impossible), key=lambda q: q.id)
    n_answerable = min(limit // 2, len(answerable))
    n_impossible = min(limit - n_answerable, len(impossible))
    return rng.sample(answerable, n_answerable) + rng.sample(impossible, n_impossible)


# --- question types -------------------------------------------------------------------------------

_WH = {
    "who": "who",
    "whom": "who",
    "whose": "who",
    "what": "what",
    "which": "which",
    "when": "when",
    "where": "where",
    "why": "why",
}


def question_type(question: str) -> str:
    """The first question word ("In what year …" is a what-question); a question opening with an
    auxiliary is yes-no; "how many"/"how much" apart from other "how" questions."""
    words = re.findall(r"[a-z]+", question.lower())
    if words and words[0] in QUESTION_TYPE_AUXILIARIES:
        return "yes-no"
    for index, word in enumerate(words):
        if word == "how":
            following = words[index + 1] if index + 1 < len(words) else ""
            return "how many/much" if following in ("many", "much") else "how"
        if word in _WH:
            return _WH[word]
    return "other"


# --- running and scoring --------------------------------------------------------------------------


class SquadRow(BaseModel):
    """One question scored: prediction = the lead when answered, "" when the engine abstained."""

    model_config = ConfigDict(frozen=True)

    id: str
    article: str
    question: str
    type: str
    is_impossible: bool
    answers: tuple[str, ...]
    status: str
    answer: str
    abstained: bool
    lead: str
    em: int
    f1: float
    # Answerable questions: some gold answer occurs in the answer text (None for impossible ones).
    contains: bool | None


def score(question: SquadQuestion, answered: AnswerReady | None) -> SquadRow:
    # No answer event at all (the run failed) abstains.
    status, answer = (answered.status, answered.answer) if answered else ("failed", "")
    gave_up = abstained(status, answer)
    lead = "" if gave_up or answered is None else lead_of(answered)
    em, f1 = best_scores(question.answers, lead)
    return SquadRow(
        id=question.id,
        article=question.article,
        question=question.question,
        type=question_type(question.question),
        is_impossible=question.is_impossible,
        answers=question.answers,
        status=status,
        answer=answer,
        abstained=gave_up,
        lead=lead,
        em=em,
        f1=f1,
        contains=None if question.is_impossible else (not gave_up and contains_gold(answer, question.answers)),
    )


def run(
    squad: SquadSet,
    picked: Sequence[SquadQuestion],
    open_session: OpenSession,
    progress: Progress | None = None,
) -> list[SquadRow]:
    """Answer each picked question over its article's KB (one session per article), in `picked` order."""
    by_article: dict[str, list[SquadQuestion]] = {}
    for question in picked:
        by_article.setdefault(question.article, []).append(question)
    answers: dict[str, AnswerReady | None] = {}
    done = 0
    with tempfile.TemporaryDirectory(prefix="mrptui-squad-") as scratch:
        for article, questions in by_article.items():
            session = open_session(_article_file(squad, article, Path(scratch)))
            for question in questions:
                answers[question.id] = _ask(session, question.question)
                done += 1
                if progress:
                    progress(done, len(picked))
    return [score(q, answers[q.id]) for q in picked]


def _article_file(squad: SquadSet, article: str, scratch: Path) -> Path:
    """The layout's own file, or the official article written as that file would be."""
    if article in squad.files:
        return squad.files[article]
    path = scratch / f"{article}.txt"
    path.write_text(squad.articles[article], encoding="utf-8")
    return path


def _ask(session: Session, question: str) -> AnswerReady | None:
    request = Request(question=question, caller=Caller())
    answer = None
    for event in session.run(request):
        if isinstance(event, AnswerReady):
            answer = event
    return answer
