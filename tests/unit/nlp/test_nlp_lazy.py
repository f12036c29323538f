"""core.nlp.lazy: a shared model is built once even when many threads ask for it at once."""

from __future__ import annotations

import threading
import time

from core.nlp import lexicon, tagger
from core.nlp.lazy import Lazy


def _race(get, threads: int = 8) -> list:
    barrier = threading.Barrier(threads)
    results: list = [None] * threads

    def worker(i: int) -> None:
        barrier.wait()
        results[i] = get()

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join(timeout=120)
    return results


def test_concurrent_first_use_builds_once_and_everyone_gets_the_same_value():
    calls = []

    def build() -> object:
        calls.append(1)
        time.sleep(0.05)  # wide window: without the lock every thread would build its own
        return object()

    lazy = Lazy(build)
    assert not lazy.loaded
    results = _race(lazy.get)
    assert len(calls) == 1
    assert all(r is results[0] for r in results)
    assert lazy.loaded and lazy.get() is results[0]


def test_the_real_lexicon_and_tagger_load_once_under_a_race():
    loads = []

    def counted_lexicon():
        loads.append("lexicon")
        return lexicon.load()

    def counted_tagger():
        loads.append("tagger")
        return tagger.load()

    for lazy in (Lazy(counted_lexicon), Lazy(counted_tagger)):
        results = _race(lazy.get, threads=4)
        assert all(r is results[0] for r in results)
    assert sorted(loads) == ["lexicon", "tagger"]


def test_the_module_singletons_are_shared():
    assert lexicon.lexicon() is lexicon.lexicon()
    assert tagger.tag(["Birds", "fly"]) == tagger.tag(["Birds", "fly"])
    assert tagger._TAGGER.loaded
