"""A story's conversation asked in one `mrptui eval` process against one `mrptui ask --session`
process per turn: `python -m benchmarks --ops conversation`.

The story and its 20 turns are written here (people, a place, follow-ups by pronoun, "And X?"),
so the figure depends on no data set. Rows: `mrptui-eval-conversation` (one process, every turn)
and `mrptui-ask-session` (a process per turn, summed), each the whole conversation's wall time,
median over REPEATS; `speedup` is their ratio. Each run gets a fresh HOME, so memory and the
index cache start empty in both.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import repeats, row

OPS = ("conversation",)
REPEATS = 3
STORY = """\
Anna Berg keeps bees on a hill above the village of Oswick. She inherited the hives from her mother, Ruth Berg, in 2004.

Ruth Berg taught school in Oswick for thirty years. She retired in 2003 and moved to the coast with her husband, Tomas.

The Oswick Beekeepers' Association meets on the first Monday of every month. Its annual membership fee is 20 pounds.

Junior members pay half the fee. The association also collects swarms for a fee of 15 pounds.

Anna sells her honey at the Saturday market. She also teaches a beginners' course in the spring.
"""
QUESTIONS = [
    "Who keeps bees above Oswick?",
    "Where does she keep them?",
    "From whom did she inherit the hives?",
    "When did she inherit them?",
    "What did her mother do?",
    "Where did she teach?",
    "When did she retire?",
    "Where did she move?",
    "Who is her husband?",
    "When does the association meet?",
    "What is its annual membership fee?",
    "Do junior members pay the same fee?",
    "And the swarm collection?",
    "Where does Anna sell her honey?",
    "What does she teach?",
    "When does she teach it?",
    "Who taught school in Oswick?",
    "For how long did she teach?",
    "Who moved to the coast?",
    "Why?",
]


def _mrptui() -> str:
    return str(Path(sys.executable).with_name("mrptui"))


def _env(home: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MRPTUI_LLM_", "MRPTUI_EMBED_"))}
    env.pop("MRPTUI_MEMORY_DIR", None)
    env.pop("MRPTUI_CACHE_DIR", None)
    env.update(
        HOME=home, XDG_DATA_HOME=f"{home}/data", XDG_CACHE_HOME=f"{home}/cache", XDG_CONFIG_HOME=f"{home}/config"
    )
    return env


def _eval_once(questions: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-conv-") as home:
        kb, queries = Path(home, "story.txt"), Path(home, "queries.json")
        kb.write_text(STORY, encoding="utf-8")
        queries.write_text(
            json.dumps(
                [
                    {
                        "id": f"t{i}",
                        "question": q,
                        "expect_evidence": [],
                        "must_not_appear": [],
                        "conversation": "story",
                    }
                    for i, q in enumerate(questions, 1)
                ]
            ),
            encoding="utf-8",
        )
        started = time.perf_counter()
        subprocess.run(
            [_mrptui(), "eval", str(queries), "--kb", str(kb), "--kb-plugin", "kb-fast", "--json"],
            env=_env(home),
            capture_output=True,
            check=True,
        )
        return (time.perf_counter() - started) * 1000


def _asks_once(questions: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-conv-") as home:
        kb = Path(home, "story.txt")
        kb.write_text(STORY, encoding="utf-8")
        started = time.perf_counter()
        for question in questions:
            subprocess.run(
                [_mrptui(), "ask", question, "--kb", str(kb), "--session", "story", "--json"],
                env=_env(home),
                capture_output=True,
                check=True,
            )
        return (time.perf_counter() - started) * 1000


def run(sizes: list[int]) -> list[dict]:
    questions = QUESTIONS[: repeats(len(QUESTIONS), 2)]  # a smoke run: a question and a follow-up
    times = {"eval": [], "ask": []}
    for _ in range(repeats(REPEATS)):
        times["eval"].append(_eval_once(questions))
        times["ask"].append(_asks_once(questions))
    rows = [
        row("mrptui-eval-conversation", len(questions), "conversation", times["eval"], 0.0),
        row("mrptui-ask-session", len(questions), "conversation", times["ask"], 0.0),
    ]
    rows[0]["speedup"] = round(statistics.median(times["ask"]) / statistics.median(times["eval"]), 2)
    return rows


if __name__ == "__main__":
    print(json.dumps(run([]), indent=1))
