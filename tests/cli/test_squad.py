"""`mrptui eval --squad`: SQuAD 2.0 files in both layouts (written here, about a beekeeping
co-operative and a canal lock, text nobody else wrote), the official scores, the sample, bad input
with file and line, and agreement with ../shared/qa/squad2-dev/judge.py where that script exists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.eval.squad import article_text, load_squad, question_type, sample, slug
from mrptui.cli import main
from tests.support.judge_lead import judge_lead

ROOT = Path(__file__).resolve().parents[2]
JUDGE = ROOT.parent / "shared" / "qa" / "squad2-dev" / "judge.py"

ARTICLES = {
    "Hollowmere_Bee_Co-operative": [
        "The Hollowmere Bee Co-operative was founded in 1931 by eleven smallholders from the Tarn valley. "
        "Its first chair was Edith Marrable, a schoolteacher who kept forty hives behind the chapel.",
        "The co-operative sells heather honey at the autumn fair in Kelby. Members pay a levy of two "
        "shillings per hive,\nwhich funds a shared extractor kept in the old forge.",
    ],
    "Saltash_Lock_(canal)": [
        "Saltash Lock raises boats nine feet between the lower and upper pounds of the Arden Canal. "
        "The lock keeper, Tomas Veal, opened the upper gates by hand until 1962.",
        "In 1962 the gates were fitted with hydraulic rams. Boaters must now book passage a day ahead "
        "because the rams are worked only between eight and six.",
    ],
}
QUESTIONS = [
    ("bee-1", 0, "When was the Hollowmere Bee Co-operative founded?", ["1931", "in 1931"]),
    ("bee-2", 0, "Who was the first chair of the co-operative?", ["Edith Marrable"]),
    ("bee-3", 1, "Where is the shared extractor kept?", ["in the old forge", "the old forge"]),
    ("bee-4", 1, "How much is the levy per hive?", ["two shillings"]),
    ("bee-5", 0, "Who was the second chair of the co-operative?", []),
    ("bee-6", 1, "What does the co-operative sell at the spring fair in Kelby?", []),
    ("lock-1", 0, "How many feet does Saltash Lock raise boats?", ["nine feet", "nine"]),
    ("lock-2", 1, "Why must boaters book passage a day ahead?", ["the rams are worked only between eight and six"]),
    ("lock-3", 0, "Who opened the lower gates by machine before 1962?", []),
    ("lock-4", 1, "Did the lock keeper fit the hydraulic rams in 1950?", []),
]


def _official(path: Path) -> Path:
    titles = list(ARTICLES)
    data = []
    for title in titles:
        paragraphs = []
        for index, context in enumerate(ARTICLES[title]):
            qas = [
                {
                    "id": qid,
                    "question": question,
                    "is_impossible": not golds,
                    "answers": [{"text": g, "answer_start": max(context.find(g), 0)} for g in golds],
                    **({"plausible_answers": []} if not golds else {}),
                }
                for qid, paragraph, question, golds in QUESTIONS
                if paragraph == index and qid.startswith("bee" if title == titles[0] else "lock")
            ]
            paragraphs.append({"context": context, "qas": qas})
        data.append({"title": title, "paragraphs": paragraphs})
    path.write_text(json.dumps({"version": "v2.0", "data": data}, indent=1), encoding="utf-8")
    return path


def _layout(folder: Path) -> Path:
    (folder / "articles").mkdir(parents=True)
    titles = list(ARTICLES)
    lines = []
    for title in titles:
        (folder / "articles" / f"{slug(title)}.txt").write_text(article_text(title, ARTICLES[title]), encoding="utf-8")
    for qid, _, question, golds in QUESTIONS:
        title = titles[0] if qid.startswith("bee") else titles[1]
        record = {"id": qid, "article": slug(title), "question": question, "answers": golds, "is_impossible": not golds}
        lines.append(json.dumps(record))
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _eval(capsys, *args: str) -> dict:
    assert main(["eval", "--squad", *args, "--json"]) == 0
    captured = capsys.readouterr()
    assert "queries" in captured.err  # progress goes to stderr, the report alone to stdout
    return json.loads(captured.out)


def test_both_layouts_read_the_same_articles_and_questions(tmp_path: Path) -> None:
    official = load_squad(_official(tmp_path / "dev.json"))
    layout = load_squad(_layout(tmp_path / "split"))
    assert official.articles == {
        name: (tmp_path / "split" / "articles" / f"{name}.txt").read_text() for name in layout.files
    }
    assert sorted(official.questions, key=lambda q: q.id) == sorted(layout.questions, key=lambda q: q.id)
    assert set(official.articles) == {"hollowmere-bee-co-operative", "saltash-lock-canal"}
    # The line break inside a paragraph became a space: each paragraph is one block.
    assert "per hive, which funds" in official.articles["hollowmere-bee-co-operative"]


def test_the_report_follows_the_official_squad_2_rules(tmp_path: Path, capsys) -> None:
    report = _eval(capsys, str(_official(tmp_path / "dev.json")))
    rows = report["rows"]
    assert (report["questions"], report["answerable"], report["impossible"]) == (10, 6, 4)
    for row in rows:
        # The lead read from the answer's structure is the one the judge reads from its text.
        assert row["lead"] == ("" if row["abstained"] else judge_lead(row["answer"]))
        if row["is_impossible"]:
            # No answer: abstaining (the empty prediction) scores 1, anything else 0.
            assert row["em"] == row["f1"] == int(row["abstained"])
    assert report["exact"] == pytest.approx(100 * sum(r["em"] for r in rows) / 10, abs=0.01)
    assert report["f1"] == pytest.approx(100 * sum(r["f1"] for r in rows) / 10, abs=0.01)
    assert report["noans_exact"] == pytest.approx(100 * report["abstain_on_impossible"], abs=0.01)
    assert report["always_abstain"] == 40.0
    assert sum(t["questions"] for t in report["types"]) == 10
    assert {t["type"] for t in report["types"]} >= {"when", "who", "where", "how many/much", "why", "yes-no"}


def test_json_and_jsonl_layouts_score_alike(tmp_path: Path, capsys) -> None:
    official = _eval(capsys, str(_official(tmp_path / "dev.json")))
    layout = _eval(capsys, str(_layout(tmp_path / "split")))
    strip = lambda report: sorted((r["id"], r["status"], r["lead"], r["em"], r["f1"]) for r in report["rows"])  # noqa: E731
    assert strip(official) == strip(layout)


def test_the_sample_is_stratified_and_seeded(tmp_path: Path) -> None:
    questions = load_squad(_layout(tmp_path / "split")).questions
    picked = sample(questions, 4, seed=7)
    assert [q.is_impossible for q in picked] == [False, False, True, True]
    assert picked == sample(questions, 4, seed=7) and picked != sample(questions, 4, seed=8)
    assert [q.id for q in sample(questions, 0, seed=1)] == sorted(q.id for q in questions)


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("In what year did the ferry stop running?", "what"),
        ("How many looms did the mill keep?", "how many/much"),
        ("How did the keeper signal the barge?", "how"),
        ("Whose hives were moved to the moor?", "who"),
        ("Was the levy raised in 1950?", "yes-no"),
        ("Name the river that feeds the canal.", "other"),
    ],
)
def test_question_types(question: str, kind: str) -> None:
    assert question_type(question) == kind


@pytest.mark.parametrize(
    ("write", "where", "message"),
    [
        (
            lambda p: p.write_text('{"data": [\n {"title": "A",\n  "paragraphs": [{"qas": []}]}]}'),
            ":3:",
            "context: Field required",
        ),
        (lambda p: p.write_text('{"data": [ {"title": "A", }'), ":1:", "INVALID_JSON"),
        (lambda p: p.write_text('{"data": []}'), ":1:", "no questions"),
    ],
)
def test_bad_official_files_are_exit_two_with_file_and_line(
    tmp_path: Path, capsys, write, where: str, message: str
) -> None:
    path = tmp_path / "bad.json"
    write(path)
    assert main(["eval", "--squad", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}{where}" in err and message in err and "Traceback" not in err


def test_bad_layout_lines_are_exit_two_with_file_and_line(tmp_path: Path, capsys) -> None:
    folder = _layout(tmp_path / "split")
    questions = folder / "questions.jsonl"
    lines = questions.read_text().splitlines()
    lines[2] = lines[2].replace('"is_impossible"', '"is_imposible"')
    lines[4] = lines[4].replace("hollowmere-bee-co-operative", "../secrets")
    questions.write_text("\n".join(lines) + "\n")
    assert main(["eval", "--squad", str(folder)]) == 2
    err = capsys.readouterr().err
    assert f"{questions}:3:" in err and "is_imposible: Extra inputs are not permitted" in err
    assert f"{questions}:5:" in err and "no article file articles/../secrets.txt" in err


@pytest.mark.parametrize("extra", [["--limit", "-1"], ["--kb", "sample_kb"], ["--fusion", "both"], ["--sample"]])
def test_bad_flags_with_squad_are_usage_errors(tmp_path: Path, capsys, extra: list[str]) -> None:
    assert main(["eval", "--squad", str(_layout(tmp_path / "split")), *extra]) == 2
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, why",
    [
        (["--exclude-self"], "nothing of its own to exclude"),
        (["--no-exclude-self"], "nothing of its own to exclude"),
        (["--run-dir", "runs"], "scores answers, not rankings"),
    ],
)
def test_beir_only_flags_are_refused_with_squad_not_ignored(tmp_path: Path, capsys, extra: list[str], why: str) -> None:
    assert main(["eval", "--squad", str(_layout(tmp_path / "split")), *extra]) == 2
    out, err = capsys.readouterr()
    assert why in err and len(err.strip().splitlines()) == 1 and out == ""
    assert not (Path.cwd() / "runs").exists()


@pytest.mark.skipif(not JUDGE.is_file(), reason="the shared SQuAD judge is not on this machine")
def test_figures_agree_with_the_shared_judge(tmp_path: Path, capsys) -> None:
    folder = _layout(tmp_path / "split")
    summary = tmp_path / "judge.json"
    mrptui = Path(sys.executable).with_name("mrptui")
    subprocess.run(
        [
            sys.executable,
            str(JUDGE),
            "--mrptui",
            str(mrptui),
            "--data",
            str(folder),
            "--limit",
            "8",
            "--seed",
            "2",
            "--examples",
            "0",
            "--summary-json",
            str(summary),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    theirs = json.loads(summary.read_text())
    ours = _eval(capsys, str(folder), "--limit", "8", "--seed", "2")
    pairs = [
        ("exact", "overall_em"),
        ("f1", "overall_f1"),
        ("hasans_exact", "hasans_em"),
        ("hasans_f1", "hasans_f1"),
        ("noans_exact", "noans_em"),
        ("lead_f1_of_answered", "lead_f1_of_answered"),
        ("exact_set_mix", "overall_em_split_mix"),
        ("f1_set_mix", "overall_f1_split_mix"),
    ]
    for mine, judge in pairs:
        assert ours[mine] == pytest.approx(100 * (theirs[judge] or 0), abs=0.01), mine
    for mine, judge in [
        ("abstain_on_impossible", "abstain_on_impossible"),
        ("abstain_on_answerable", "abstain_on_answerable"),
        ("contains_of_answered", "contains_of_answered"),
    ]:
        assert ours[mine] == pytest.approx(theirs[judge] or 0, abs=1e-4), mine
    assert ours["status_counts"] == theirs["status_counts"]


@pytest.mark.parametrize("args", [["sample_kb/queries.json", "--limit", "3"], ["--beir", "nowhere", "--seed", "1"]])
def test_limit_and_seed_need_squad(capsys, args: list[str]) -> None:
    assert main(["eval", *args]) == 2
    assert "--limit and --seed need --squad" in capsys.readouterr().err
