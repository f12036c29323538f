"""nltk's own perceptron tagger, the reference core/nlp/perceptron.py must decide as, loaded the
way scripts/train_tagger.py loads it: `from nltk.tag.perceptron import ...` runs nltk's __init__,
which imports nearly all of nltk and scipy.stats (~1.2 CPU s a test process, none of it used)."""

from __future__ import annotations

from functools import cache

from core.infra.submodule import import_submodule


@cache  # the loaded modules leave sys.modules again: each call would load them anew
def perceptron_tagger() -> type:
    """nltk's `PerceptronTagger` class (scipy is optional to nltk.metrics, which tagging never calls)."""
    return import_submodule("nltk.tag.perceptron", absent=("scipy",)).PerceptronTagger
