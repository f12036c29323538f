"""The BM25 peers of `python -m benchmarks` answer like BM25 and report document positions, so the
top-10 overlap they are compared on is computed over the same documents as ours."""

from __future__ import annotations

import pytest

from benchmarks import SMOKE_ENV, bm25_peers

# Lighthouse keeping, already tokenised as the benchmark hands documents to the peers.
DOCUMENTS = [
    ["lamp", "wick", "trim", "nightly", "keeper"],
    ["fog", "horn", "sound", "every", "minute", "fog"],
    ["keeper", "log", "tide", "weather", "entry"],
    ["lens", "fresnel", "prism", "lamp", "beam"],
    ["supply", "boat", "oil", "bread", "monthly"],
    ["storm", "shutter", "glass", "gallery", "wind"],
]


@pytest.fixture
def peers(monkeypatch) -> list[bm25_peers.Peer]:
    monkeypatch.setenv(SMOKE_ENV, "1")  # numba's compile (~6 s of CPU) is left to the benchmark run
    found = bm25_peers.available()
    # rank-bm25 is in the test extra; the other peers come with the bench extra (`make bench`).
    assert any(peer.engine == "rank-bm25" for peer in found), "the test extra installs rank-bm25"
    return found


def test_every_peer_ranks_the_matching_document_first(peers) -> None:
    for peer in peers:
        search = peer.build(DOCUMENTS)
        assert int(list(search(["fog", "horn"], 3))[0]) == 1, peer.engine
        assert int(list(search(["fresnel", "lens"], 3))[0]) == 3, peer.engine
        hits = {int(i) for i in search(["keeper"], 2)}
        assert hits == {0, 2}, peer.engine


def test_a_missing_package_is_skipped_with_a_note(monkeypatch, capsys) -> None:
    monkeypatch.setattr(
        bm25_peers, "_CANDIDATES", ((bm25_peers.Peer("ghost", bm25_peers._rank_bm25), ("no_such_module_x",)),)
    )
    assert bm25_peers.available() == []
    assert "ghost skipped: No module named 'no_such_module_x'" in capsys.readouterr().err


def test_one_peer_is_found_by_name_or_skipped_with_a_note(monkeypatch, capsys) -> None:
    # `cold_open` times tantivy's build alone beside it (benchmarks/store.py), not every peer.
    ghost = bm25_peers.Peer("ghost", bm25_peers._rank_bm25)
    real = bm25_peers.Peer("rank-bm25", bm25_peers._rank_bm25)
    monkeypatch.setattr(bm25_peers, "_CANDIDATES", ((ghost, ("no_such_module_x",)), (real, ("rank_bm25",))))
    assert bm25_peers.named("rank-bm25") is real
    assert bm25_peers.named("ghost") is None
    assert "ghost skipped: No module named 'no_such_module_x'" in capsys.readouterr().err
    assert bm25_peers.named("nobody") is None
