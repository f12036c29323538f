"""Train the shipped UPOS tagger: nltk's averaged perceptron on UD English EWT.

    python scripts/train_tagger.py [--ud DIR] [--out FILE] [--limit N] [--iterations 5]

Reads `en_ewt-ud-train.conllu` (training) and `en_ewt-ud-test.conllu` (the accuracy printed), both
from `--ud` (default ../shared/nlp/ud-english-ewt). The words trained on are the treebank's
syntactic words (a multiword token's range line and empty nodes are skipped), so "don't" is
"do" + "n't", which is how core.nlp.tagger splits text too.

The output is deterministic: a fixed shuffle seed, nltk breaks score ties by tag name, and the
weights are written with sorted keys into a gzip stream with no timestamp, so a re-run writes the
same bytes (tests/unit/nlp/test_nlp_tagger.py checks this on a slice). JSON, not pickle: loading the
weights can never run code.

Beside the weights it writes `upos-ewt-closed.json`: the training split's words of each closed
class (ADP, AUX, CCONJ, DET, PART, PRON, SCONJ), which the tagger keeps those tags to.

The weights and word lists are a derivative of UD English EWT and carry its licence, CC BY-SA 4.0
(see NOTICE).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nltk.tag.perceptron import PerceptronTagger

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_UD = ROOT.parent / "shared" / "nlp" / "ud-english-ewt"
DEFAULT_OUT = ROOT / "core" / "nlp" / "data" / "upos-ewt.json.gz"
SEED = 0
FORMAT = "mrptui-upos-perceptron/1"
CLOSED_FORMAT = "mrptui-upos-closed/1"
CLOSED_NAME = "upos-ewt-closed.json"
# UPOS's closed classes: a word the training split never gave one of these tags does not get it.
CLOSED_TAGS = ("ADP", "AUX", "CCONJ", "DET", "PART", "PRON", "SCONJ")

Sentence = list[tuple[str, str]]


def read_conllu(path: Path, limit: int | None = None) -> list[Sentence]:
    """(FORM, UPOS) of each syntactic word, one list per sentence, in file order."""
    return list(_sentences(path, limit))


def _sentences(path: Path, limit: int | None) -> Iterator[Sentence]:
    sentence: Sentence = []
    count = 0
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            line = line.rstrip("\n")
            if not line:
                if sentence:
                    yield sentence
                    count += 1
                    if limit is not None and count >= limit:
                        return
                sentence = []
                continue
            if line.startswith("#"):
                continue
            columns = line.split("\t")
            if len(columns) != 10:
                raise ValueError(f"{path}:{number}: expected 10 tab-separated columns, got {len(columns)}")
            if not columns[0].isdigit():  # "3-4" multiword range or "5.1" empty node
                continue
            sentence.append((columns[1], columns[3]))
    if sentence:
        yield sentence


def train(sentences: Sequence[Sentence], iterations: int) -> PerceptronTagger:
    # nltk shuffles with the module-level `random` between iterations.
    random.seed(SEED)
    tagger = _perceptron().PerceptronTagger(load=False)
    tagger.train([list(s) for s in sentences], nr_iter=iterations)
    return tagger


def _perceptron() -> ModuleType:
    """nltk's perceptron tagger without `import nltk`, whose __init__ imports all of nltk and scipy:
    ~1.7 of the ~2.5 CPU s a small training run takes. scipy is optional to nltk.metrics (its
    significance tests), which training never calls."""
    from core.infra.submodule import import_submodule

    return import_submodule("nltk.tag.perceptron", absent=("scipy",))


def accuracy(tag: Callable[[list[str]], list[str]], sentences: Sequence[Sentence]) -> tuple[int, int]:
    """(words `tag` tagged right, words)."""
    right = total = 0
    for sentence in sentences:
        for (_, gold), guess in zip(sentence, tag([w for w, _ in sentence])):
            right += gold == guess
            total += 1
    return right, total


def closed_vocabularies(sentences: Sequence[Sentence]) -> bytes:
    """Each closed-class tag's words in the training split (lower case, sorted), as JSON: the
    words the tagger may give that tag (core.nlp.tagger.closed_revise)."""
    vocab: dict[str, set[str]] = {tag: set() for tag in CLOSED_TAGS}
    for sentence in sentences:
        for word, tag in sentence:
            if tag in vocab:
                vocab[tag].add(word.lower())
    document = {"format": CLOSED_FORMAT, **{tag: sorted(words) for tag, words in vocab.items()}}
    return (json.dumps(document, ensure_ascii=False, indent=0, sort_keys=False) + "\n").encode("utf-8")


def encode(tagger: PerceptronTagger) -> bytes:
    """The model as gzipped JSON with sorted keys and no gzip timestamp: same model, same bytes."""
    weights = {feature: dict(sorted(w.items())) for feature, w in sorted(tagger.model.weights.items()) if w}
    document = {
        "format": FORMAT,
        "classes": sorted(tagger.classes),
        "tagdict": dict(sorted(tagger.tagdict.items())),
        "weights": weights,
    }
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"), sort_keys=False)
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ud", type=Path, default=DEFAULT_UD, help="folder with the en_ewt-ud-*.conllu files")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where to write the gzipped JSON weights")
    parser.add_argument("--limit", type=int, default=None, help="train on the first N sentences only")
    parser.add_argument("--iterations", type=int, default=5, help="perceptron passes over the training data")
    parser.add_argument("--no-eval", action="store_true", help="skip the test-set accuracy")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # this tree's core, not an installed one

    started = time.process_time()
    train_sents = read_conllu(args.ud / "en_ewt-ud-train.conllu", args.limit)
    tagger = train(train_sents, args.iterations)
    trained = time.process_time() - started
    blob = encode(tagger)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    args.out.with_name(CLOSED_NAME).write_bytes(closed_vocabularies(train_sents))
    print(f"trained on {len(train_sents):,} sentences in {trained:.1f} CPU s; wrote {args.out} ({len(blob):,} bytes)")
    if not args.no_eval:
        test = read_conllu(args.ud / "en_ewt-ud-test.conllu")
        right, total = accuracy(lambda ws: [t for _, t in tagger.tag(ws)], test)
        print(f"test accuracy {right / total:.2%} ({right:,}/{total:,} words)")
        # What callers get: the same weights with core.nlp.tagger's WordNet and name revisions.
        from core.nlp.tagger import load, tag_with

        model = load(args.out)
        right, total = accuracy(lambda ws: tag_with(model, ws), test)
        print(f"test accuracy with core.nlp.tagger's revisions {right / total:.2%} ({right:,}/{total:,} words)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
