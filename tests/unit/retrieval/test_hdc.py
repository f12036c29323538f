from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from core.cnl import to_markdown
from core.infra.config import HdcConfig, Lane
from core.infra.resources import config_dir
from core.kernel.contract import PluginType, Request, RunContext
from core.kernel.session import Session
from core.retrieval.hdc.encoding import (
    DIMENSIONS,
    WORDS,
    bind,
    bundle,
    calibrate,
    char_ngrams,
    encode_ngrams,
    encode_ngrams_batch,
    encode_query,
    hv,
    hv_table,
    noise_floor,
    permute,
    similarity,
    token_vectors,
    unit_windows,
)
from core.retrieval.hdc.index import HdcIndex, match_notes
from core.retrieval.hdc.unit_cache import UnitVectorCache
from core.text.tokenizer import tokenize
from core.units import Act, Caller, Intent, Role
from tests.support.kb_units import unit

SEED = HdcConfig().seed
CONFIG = HdcConfig()
# For independent random 4096-bit vectors the similarity is Binomial(4096, 1/2) / 4096: mean 0.5,
# standard deviation sqrt(0.25 / 4096) ≈ 0.0078. The tolerances below are multiples of that.
SIM_STD = 0.0078


def random_vectors(count: int) -> np.ndarray:
    return hv_table(SEED, [f"test:{i}" for i in range(count)])


def test_hv_is_deterministic_and_seeded() -> None:
    assert hv(SEED, "kafka").shape == (WORDS,) and hv(SEED, "kafka").dtype == np.uint64
    assert np.array_equal(hv(SEED, "kafka"), hv_table(SEED, ["kafka"])[0])
    assert not np.array_equal(hv(SEED, "kafka"), hv("another-seed", "kafka"))
    assert similarity(hv(SEED, "kafka"), hv("another-seed", "kafka")) == pytest.approx(0.5, abs=6 * SIM_STD)


def test_similarity_of_a_vector_with_itself_is_one() -> None:
    x = random_vectors(1)[0]
    assert similarity(x, x) == 1.0
    assert similarity(x, ~x) == 0.0


def test_random_pairs_are_near_half_mean_within_0_01_each_within_0_05() -> None:
    """200 pairs: the mean is within 0.01 (~10 standard errors) and each within 0.05 (~6.4 std)."""
    vectors = random_vectors(400)
    sims = np.array([similarity(a, b) for a, b in zip(vectors[::2], vectors[1::2], strict=True)])
    assert abs(sims.mean() - 0.5) < 0.01
    assert np.all(np.abs(sims - 0.5) < 0.05)


def test_bind_is_self_inverse_and_dissimilar_to_its_inputs() -> None:
    a, b = random_vectors(2)
    bound = bind(a, b)
    assert np.array_equal(bind(bound, b), a)
    assert similarity(bound, a) == pytest.approx(0.5, abs=6 * SIM_STD)
    assert similarity(bound, b) == pytest.approx(0.5, abs=6 * SIM_STD)


def test_permute_is_a_one_bit_rotation() -> None:
    x = random_vectors(1)[0]
    bits = np.unpackbits(x.view(np.uint8), bitorder="little")
    rotated = np.unpackbits(permute(x).view(np.uint8), bitorder="little")
    assert np.array_equal(rotated, np.roll(bits, 1))
    assert similarity(permute(x), x) == pytest.approx(0.5, abs=6 * SIM_STD)


def test_bundle_of_three_keeps_members_and_rejects_non_members() -> None:
    a, b, c, stranger = random_vectors(4)
    mix = bundle(np.array([a, b, c]))
    for member in (a, b, c):
        assert similarity(mix, member) > 0.7  # expected 0.75
    assert similarity(mix, stranger) == pytest.approx(0.5, abs=6 * SIM_STD)


def test_even_bundle_tie_rule_is_deterministic_order_free_and_unbiased() -> None:
    a, b, c, d = random_vectors(4)
    ab = bundle(np.array([a, b]))
    assert np.array_equal(ab, bundle(np.array([b, a])))
    assert similarity(ab, a) > 0.7 and similarity(ab, b) > 0.7
    # The tie breaker comes from the members, so unrelated even bundles stay unrelated.
    assert similarity(ab, bundle(np.array([c, d]))) == pytest.approx(0.5, abs=6 * SIM_STD)


def test_bundle_of_one_is_the_member_and_of_none_is_zero() -> None:
    a = random_vectors(1)[0]
    assert np.array_equal(bundle(a[None]), a)
    assert not bundle(np.empty((0, WORDS), np.uint64)).any()


def test_ngram_encoding_keeps_word_order() -> None:
    forward, backward = encode_ngrams(["kafka", "broker"], SEED), encode_ngrams(["broker", "kafka"], SEED)
    assert 0.6 < similarity(forward, backward) < 0.9  # shared unigrams, different bigram
    assert np.array_equal(forward, encode_ngrams(["kafka", "broker"], SEED))


def test_ngram_encoding_is_similar_for_overlapping_text() -> None:
    unit = encode_ngrams(tokenize("Kafka replication factor of a topic"), SEED)
    related = encode_ngrams(tokenize("replication factor"), SEED)
    unrelated = encode_ngrams(tokenize("sourdough starter hydration"), SEED)
    assert similarity(unit, related) > 0.6
    assert similarity(unit, unrelated) == pytest.approx(0.5, abs=6 * SIM_STD)


def test_batch_encoding_equals_one_at_a_time() -> None:
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(60)]
    sequences = [[words[j] for j in rng.integers(0, 60, rng.integers(0, 30))] for _ in range(80)]
    batch = encode_ngrams_batch(sequences, SEED)
    assert batch.shape == (80, WORDS)
    for sequence, vector in zip(sequences, batch, strict=True):
        assert np.array_equal(encode_ngrams(sequence, SEED), vector)


def test_bit_sliced_majority_equals_bundle_for_every_member_count() -> None:
    # The in-place adder tree takes a different path for each stack height (thirds, leftovers,
    # carries joining the next weight): every count from 1 to 40 must give `bundle`'s bits.
    from core.retrieval.hdc.vectors import _majority

    rng = np.random.default_rng(11)
    for members in range(1, 41):
        blocks = rng.integers(0, 1 << 63, size=(3, members, WORDS), dtype=np.uint64) << np.uint64(1)
        blocks |= rng.integers(0, 2, size=(3, members, WORDS), dtype=np.uint64)
        expected = np.stack([bundle(block) for block in blocks])
        assert np.array_equal(_majority(blocks.copy()), expected), members


def test_batch_encoding_of_every_length_up_to_70_equals_one_at_a_time() -> None:
    rng = np.random.default_rng(5)
    sequences = [[f"w{j}" for j in rng.integers(0, 50, length)] for length in range(71)]
    batch = encode_ngrams_batch(sequences, SEED)
    for sequence, vector in zip(sequences, batch, strict=True):
        assert np.array_equal(encode_ngrams(sequence, SEED), vector), len(sequence)


KB = [
    unit(1, Role.DEFINITION, "Kafka replication factor", "The replication factor is the number of broker copies."),
    unit(2, Role.NARRATIVE, "Sourdough starter", "A starter needs flour, water and a warm kitchen."),
    unit(3, Role.PROCEDURE, "Raising the replication factor", "Reassign partitions with more replicas."),
    unit(4, Role.COMPARISON, "Tea versus coffee", "Coffee has more caffeine than tea.", utility_acts=(Act.COMPARE,)),
]


@pytest.fixture
def index() -> HdcIndex:
    return HdcIndex.build(KB, CONFIG)


def test_matching_topic_scores_higher_than_unrelated(index: HdcIndex) -> None:
    query = encode_query(tokenize("What is the Kafka replication factor?"), Act.DEFINE, CONFIG)
    scores = dict(zip(index.unit_ids, index.scores(query), strict=True))
    assert scores["kb::chunk-001::unit-001"] > scores["kb::chunk-001::unit-003"] > scores["kb::chunk-001::unit-002"]
    assert scores["kb::chunk-001::unit-001"] > scores["kb::chunk-001::unit-004"]


@pytest.mark.parametrize("act", list(Act))
def test_scores_stay_in_unit_interval(index: HdcIndex, act: Act) -> None:
    for text in ("Kafka replication factor", "", "coffee tea caffeine", "the of and"):
        scores = index.scores(encode_query(tokenize(text), act, CONFIG))
        assert scores.shape == (len(KB),) and scores.dtype == np.float64
        assert np.all((scores >= 0) & (scores <= 1))


def test_identical_text_and_preferred_role_scores_near_one() -> None:
    only = [unit(1, Role.DEFINITION, "replication factor", "replication factor")]
    index = HdcIndex.build(only, CONFIG)
    scores = index.scores(encode_query(["replic", "factor"], Act.DEFINE, CONFIG))
    # topic and claim match exactly (1.0 each, so the gate is 1); the role is one of two preferred
    # roles (s ≈ 0.5 before calibration); the act is exact.
    z = noise_floor(CONFIG)
    assert scores[0] == pytest.approx(0.35 + 0.35 + 0.20 * (0.5 - z) / (1 - z) + 0.10, abs=0.1 * 0.2)


def test_field_similarities_explain_the_score(index: HdcIndex) -> None:
    query = encode_query(tokenize("Kafka replication factor"), Act.DEFINE, CONFIG)
    scores = index.scores(query)
    for row, uid in enumerate(index.unit_ids):
        fields = index.field_similarities(query, uid)
        assert set(fields) == {
            "topic",
            "claim",
            "role",
            "acts",
            "topic_score",
            "claim_score",
            "role_score",
            "acts_score",
            "claim_window",
            "gate",
        }
        for name in ("topic", "claim", "role", "acts"):
            assert fields[f"{name}_score"] == pytest.approx(calibrate(fields[name], noise_floor(CONFIG)))
        assert total_of(fields) == pytest.approx(scores[row])
    assert index.field_similarities(query, "kb::chunk-001::unit-001")["topic"] == 1.0


def total_of(fields: dict[str, float], config: HdcConfig = CONFIG) -> float:
    """The documented formula: text fields, plus role and acts scaled by the better text field."""
    w = config.field_weights
    text = w["topic"] * fields["topic_score"] + w["claim"] * fields["claim_score"]
    return text + fields["gate"] * (w["role"] * fields["role_score"] + w["acts"] * fields["acts_score"])


def test_query_without_tokens_scores_nothing(index: HdcIndex) -> None:
    """Role and acts alone are not a match: with no text to compare every unit scores 0."""
    query = encode_query([], Act.COMPARE, CONFIG)
    fields = index.field_similarities(query, "kb::chunk-001::unit-004")
    assert "topic" not in fields and fields["acts"] == 1.0 and fields["gate"] == 0.0
    assert not index.scores(query).any()


def test_role_and_acts_are_stored_once_per_distinct_value() -> None:
    units = [unit(i, Role.DEFINITION if i % 2 else Role.NARRATIVE, f"topic {i}", "claim") for i in range(1, 11)]
    index = HdcIndex.build(units, CONFIG)
    assert len(index.role_table) == 2 and len(index.acts_table) == 2
    assert index.topic.shape == index.claim.shape == (10, WORDS)
    assert index.claim_start.tolist() == list(range(10))


def test_cache_reencodes_only_edited_units() -> None:
    cache = UnitVectorCache()
    first = HdcIndex.build(KB, CONFIG, cache)
    assert cache.encoded == len(KB)
    edited = [*KB[:2], KB[2].model_copy(update={"topic": "Lowering the replication factor"}), KB[3]]
    second = HdcIndex.build(edited, CONFIG, cache)
    assert cache.encoded == len(KB) + 1
    assert np.array_equal(first.topic[[0, 1, 3]], second.topic[[0, 1, 3]])
    assert not np.array_equal(first.topic[2], second.topic[2])
    assert np.array_equal(second.claim, HdcIndex.build(edited, CONFIG).claim)
    assert np.array_equal(second.topic, HdcIndex.build(edited, CONFIG).topic)
    HdcIndex.build(edited[:2], CONFIG, cache)  # a narrower view reuses everything
    assert cache.encoded == len(KB) + 1


def test_cache_keys_include_the_seed() -> None:
    cache = UnitVectorCache()
    HdcIndex.build(KB, CONFIG, cache)
    other = HdcIndex.build(KB, HdcConfig(seed="other"), cache)
    assert cache.encoded == 2 * len(KB)
    assert np.array_equal(other.topic, HdcIndex.build(KB, HdcConfig(seed="other")).topic)


def test_scan_matches_direct_similarity_on_many_rows() -> None:
    """More rows than one 1024-row scan chunk, so chunk boundaries are exercised."""
    units = [unit(i, list(Role)[i % 9], f"topic word{i % 37} w{i % 11}", f"claim c{i % 13}") for i in range(1, 2600)]
    units = [
        u if u.role is not Role.PROCEDURE else u.model_copy(update={"claim": None, "procedure": "steps"}) for u in units
    ]
    index = HdcIndex.build(units, CONFIG)
    query = encode_query(tokenize("topic word5 w3"), Act.EXPLAIN, CONFIG)
    scores = index.scores(query)
    for row in (0, 1023, 1024, 2047, 2048, len(units) - 1):
        fields = index.field_similarities(query, index.unit_ids[row])
        assert scores[row] == pytest.approx(total_of(fields))


def test_empty_view() -> None:
    index = HdcIndex.build([], CONFIG)
    assert index.scores(encode_query(["kafka"], Act.DEFINE, CONFIG)).shape == (0,)


def test_vectors_are_4096_bits() -> None:
    assert WORDS * 64 == DIMENSIONS == 4096


# --- calibration and encoding options -------------------------------------------------------------

WORDS_POOL = (
    "anchor hull keel mast rudder sail tide harbour buoy compass lantern rope knot deck galley cabin "
    "comet nebula quasar orbit crater meteor pulsar lens telescope eclipse solstice aurora zenith "
    "loom spindle yarn weave dye shuttle bobbin felt wool linen thread needle pattern"
).split()


def test_unrelated_units_score_about_zero_whatever_their_role() -> None:
    """Random questions against a KB: units sharing no token with the question score ≈ 0."""
    rng = np.random.default_rng(7)
    roles = [r for r in Role if r is not Role.PROCEDURE]
    units = [
        unit(i, roles[i % len(roles)], " ".join(rng.choice(WORDS_POOL, 3)), " ".join(rng.choice(WORDS_POOL, 25)) + ".")
        for i in range(1, 301)
    ]
    index = HdcIndex.build(units, CONFIG)
    unrelated_scores, related_scores = [], []
    for trial in range(40):
        question = [f"zz{trial}word{j}" for j in range(3)] + list(rng.choice(WORDS_POOL, 2))
        scores = index.scores(encode_query(tokenize(" ".join(question)), list(Act)[trial % len(Act)], CONFIG))
        asked = set(tokenize(" ".join(question)))
        for u, score in zip(units, scores, strict=True):
            shares = asked & set(tokenize(f"{u.topic} {u.body}"))
            (related_scores if shares else unrelated_scores).append(score)
    assert np.median(unrelated_scores) < 0.02
    assert np.mean(np.array(unrelated_scores) == 0.0) > 0.9
    # One shared word in a 25-word unit is a faint match, often under the noise floor; on average
    # sharing a word still scores well above sharing none.
    assert np.mean(related_scores) > 5 * np.mean(unrelated_scores)


def test_role_and_acts_add_only_alongside_text() -> None:
    units = [unit(1, Role.DEFINITION, "glacier", "ice."), unit(2, Role.NARRATIVE, "glacier", "ice.")]
    index = HdcIndex.build(units, CONFIG)
    matched = index.scores(encode_query(tokenize("glacier"), Act.DEFINE, CONFIG))
    assert matched[0] > matched[1] > 0  # same text; the preferred role adds on top of it
    unrelated = index.scores(encode_query(tokenize("volcano"), Act.DEFINE, CONFIG))
    assert unrelated.max() < 0.02


def test_claim_windows_find_one_matching_sentence_in_a_long_claim() -> None:
    filler = " ".join(f"The {w} was checked again." for w in WORDS_POOL[:20])
    body = f"{filler} Sourdough starters need warm flour. {filler}"
    units = [unit(1, Role.NARRATIVE, "Ship log", body)]
    whole_config = HdcConfig(claim_window=0)
    query = encode_query(tokenize("sourdough starters warm flour"), Act.EXPLAIN, whole_config)
    whole = HdcIndex.build(units, whole_config)
    windowed_config = HdcConfig(claim_window=1)
    windowed = HdcIndex.build(units, windowed_config)
    windowed_query = encode_query(tokenize("sourdough starters warm flour"), Act.EXPLAIN, windowed_config)
    fields = windowed.field_similarities(windowed_query, units[0].id)
    assert fields["claim_score"] > 0.3 > whole.field_similarities(query, units[0].id)["claim_score"]
    windows = unit_windows(body, 1)
    assert windows[int(fields["claim_window"])] == "Sourdough starters need warm flour."
    assert len(windows) == 41 and unit_windows(body, 0) == [body] and unit_windows("One.", 3) == ["One."]


def test_character_ngrams_make_related_word_forms_similar() -> None:
    plain, chars = HdcConfig(char_ngrams=0), HdcConfig(char_ngrams=3)
    near = lambda config: similarity(  # noqa: E731
        encode_ngrams(["cholesterol"], config.seed, token_vectors(config)),
        encode_ngrams(["hypercholesterolemia"], config.seed, token_vectors(config)),
    )
    assert near(plain) == pytest.approx(0.5, abs=6 * SIM_STD)
    assert near(chars) > 0.5 + 10 * SIM_STD
    assert char_ngrams("tea", 3) == ["<te", "tea", "ea>"]
    with pytest.raises(ValueError, match="charNgrams"):
        HdcConfig(char_ngrams=1)


def test_char_token_vectors_built_together_equal_one_bundle_per_token() -> None:
    # The batched build (shared n-gram hashes, tokens grouped by member count) must give each
    # token exactly the bundle of its own HV and its n-grams' HVs, odd and even member counts alike.
    from core.retrieval.hdc.vectors import _CACHES, token_table

    words = ["", "a", "aa", "aaaa", "tea", "teas", "kayak", "photosynthesis", "fjörd", "x" * 30]
    for n in (2, 3, 5):
        _CACHES.clear()
        expected = np.stack(
            [bundle(hv_table(SEED, [f"tok:{w}", *(f"chr:{g}" for g in char_ngrams(w, n))])) for w in words]
        )
        assert np.array_equal(token_table(SEED, words, n), expected)
        # Partly cached: the known words come from the cache, the new one is built.
        again = token_table(SEED, ["kayak", "glacier", "tea"], n)
        assert np.array_equal(again[0], expected[words.index("kayak")])
        assert np.array_equal(again[2], expected[words.index("tea")])
        glacier = ["tok:glacier", *(f"chr:{g}" for g in char_ngrams("glacier", n))]
        assert np.array_equal(again[1], bundle(hv_table(SEED, glacier)))


def test_char_token_vectors_of_a_script_with_thousands_of_characters() -> None:
    # 2,000 distinct characters and 6-grams do not fit one int64 key per n-gram: the raw
    # code points are compared instead, with the same vectors.
    from core.retrieval.hdc.vectors import _CACHES, token_table

    _CACHES.clear()
    chars = [chr(0x4E00 + i) for i in range(2000)]
    words = ["".join(chars[(7 * i + j) % 2000] for j in range(3 + i % 9)) for i in range(400)] + ["a"]
    table = token_table(SEED, words, 6)
    for i in (0, 1, 57, 399, 400):
        members = [f"tok:{words[i]}", *(f"chr:{g}" for g in char_ngrams(words[i], 6))]
        assert np.array_equal(table[i], bundle(hv_table(SEED, members)))


def test_vector_cache_answers_repeats_and_stays_within_its_bound() -> None:
    from core.retrieval.hdc.vectors import _VectorCache

    def build(keys: list[str]) -> np.ndarray:
        built.append(list(keys))
        return hv_table(SEED, keys)

    built: list[list[str]] = []
    cache = _VectorCache(limit=3)
    np.testing.assert_array_equal(cache.table(["a", "b", "a"], build), hv_table(SEED, ["a", "b", "a"]))
    assert built == [["a", "b"]]  # a repeated key is built once
    np.testing.assert_array_equal(cache.table(["b", "c"], build), hv_table(SEED, ["b", "c"]))
    assert built[-1] == ["c"]
    # Two more keys would pass the bound of 3: the cache starts afresh, answers stay right.
    np.testing.assert_array_equal(cache.table(["d", "e", "a"], build), hv_table(SEED, ["d", "e", "a"]))
    assert len(cache._rows) <= 3
    np.testing.assert_array_equal(cache.table(["e", "d"], build), hv_table(SEED, ["e", "d"]))


def test_encoding_options_are_part_of_the_cache_key() -> None:
    cache = UnitVectorCache()
    HdcIndex.build(KB, CONFIG, cache)
    HdcIndex.build(KB, HdcConfig(char_ngrams=0), cache)
    HdcIndex.build(KB, HdcConfig(claim_window=0), cache)
    assert cache.encoded == 3 * len(KB)


def test_match_notes_name_the_best_window_and_near_word_forms_without_unit_text() -> None:
    config = HdcConfig(claim_window=1, char_ngrams=3)
    body = "Shading paint keeps glass cool. Hypercholesterolemia responds to oat bran. Vents open at noon."
    target = unit(1, Role.EXPLANATION, "Diet notes", body)
    index = HdcIndex.build([target, KB[1]], config)
    query = index.query(tokenize("cholesterol oat bran"), Act.EXPLAIN)
    assert index.field_similarities(query, target.id)["claim_window"] == 1.0
    assert unit_windows(body, 1)[1] == "Hypercholesterolemia responds to oat bran."
    notes = match_notes(index, query, target)
    assert notes[0].startswith("cholesterol ≈ a unit word (shared n-grams ")
    assert "ole" in notes[0] and "hypercholesterolemia" not in notes[0]  # events carry no unit text
    assert match_notes(index, index.query([], Act.EXPLAIN), target) == ()


def test_learned_context_vectors_pull_co_occurring_words_together() -> None:
    """Random indexing: two words never in the same unit as the question's word, but always in the
    same units as each other, come out similar; the question's exact word still matches best."""
    config = HdcConfig(context_vectors=256, char_ngrams=0, claim_window=0)
    units = [unit(i, Role.NARRATIVE, f"note {i}", f"laptop notebook battery {WORDS_POOL[i]}.") for i in range(1, 9)]
    units += [unit(i, Role.NARRATIVE, f"note {i}", f"kettle teapot {WORDS_POOL[i]}.") for i in range(9, 17)]
    index = HdcIndex.build(units, config)
    assert index.model is not None and len(index.model) > 0
    table = index.model(["laptop", "notebook", "kettl"])
    assert similarity(table[0], table[1]) > 0.5 + 10 * SIM_STD
    assert similarity(table[0], table[2]) < 0.5 + 4 * SIM_STD
    scores = index.scores(index.query(["notebook"], Act.EXPLAIN))
    assert scores[:8].min() > scores[8:].max()


def test_feedback_finds_units_worded_like_the_best_match() -> None:
    """The question shares words only with unit 1; unit 2 says the same in unit 1's other words.
    With unit 1 as feedback the lane also finds unit 2; without it unit 2 scores 0."""
    config = HdcConfig(claim_window=0, char_ngrams=0)
    first = unit(
        1, Role.EXPLANATION, "Glacier melt", "Glacier melt raises sea level through meltwater runoff and calving."
    )
    second = unit(2, Role.EXPLANATION, "Ice sheets", "Meltwater runoff and calving from ice sheets raise sea level.")
    other = unit(3, Role.EXPLANATION, "Bread", "Sourdough needs a warm kitchen and patience.")
    index = HdcIndex.build([first, second, other], config)
    plain = index.query(tokenize("glacier melt"), Act.EXPLAIN)
    expanded = index.with_feedback(plain, [first.id])
    before, after = index.scores(plain), index.scores(expanded)
    assert before[1] == 0.0 < after[1]
    assert after[0] > after[1] > after[2] == 0.0
    assert index.with_feedback(plain, []) is plain and index.with_feedback(plain, ["nope"]) is plain


@pytest.mark.parametrize(("profile_feedback", "finds_ice_sheets"), [(None, True), (0, False)])
def test_a_profile_sets_its_own_feedback_depth(tmp_path, profile_feedback, finds_ice_sheets) -> None:
    """hdc.feedbackUnits is the lane's default; a profile's own feedbackUnits replaces it for that
    profile's HDC lane (here 0: no feedback, so the unit worded only like the best match is missed)."""
    kb = tmp_path / "kb"
    kb.mkdir()
    units = [
        unit(
            1, Role.EXPLANATION, "Glacier melt", "Glacier melt raises sea level through meltwater runoff and calving."
        ),
        unit(2, Role.EXPLANATION, "Ice sheets", "Meltwater runoff and calving from ice sheets raise sea level."),
        unit(3, Role.EXPLANATION, "Bread", "Sourdough needs a warm kitchen and patience."),
    ]
    (kb / "ice.md").write_text(to_markdown(units), encoding="utf-8")
    config = tmp_path / "config"
    shutil.copytree(config_dir(), config)
    retrieval = json.loads((config / "retrieval.json").read_text())
    retrieval["hdc"].update({"claimWindow": 0, "charNgrams": 0, "feedbackUnits": 1})
    balanced = retrieval["profiles"]["kb-balanced"]
    balanced["lanes"] = ["bm25", "hdc"]
    balanced.pop("feedbackUnits", None)
    if profile_feedback is not None:
        balanced["feedbackUnits"] = profile_feedback
    (config / "retrieval.json").write_text(json.dumps(retrieval))
    session = Session([kb], config)
    plugin = session.registry.get("kb-balanced", PluginType.KB)
    context = RunContext(
        request=Request(question="glacier melt", caller=Caller()), view=session.view(Caller()), services=None
    )
    outcome = plugin.retrieve(context, Intent(act=Act.EXPLAIN, target="glacier melt", output="text")).outcome
    ice_sheets = outcome.candidate(units[1].id)
    assert (ice_sheets is not None and ice_sheets.lane(Lane.HDC) is not None) is finds_ice_sheets


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.sampled_from(["tide", "Ebb", "U.S.", "end.", "why?", "no!", "e.g.", " ", "\n", "- ", "1) "]), max_size=14
    ),
    st.integers(min_value=1, max_value=3),
)
@example(["tide", "end.", "Ebb"], 1)
@example(["why?", "Ebb", "no!", "tide"], 2)
@example(["tide", "\n", "- ", "Ebb"], 1)
def test_claim_windows_skip_the_splitter_only_when_it_could_not_split(words: list[str], size: int) -> None:
    from core.retrieval.hdc.encoding import _sentences

    body = " ".join(words)
    parts = _sentences(body)
    expected = [body] if len(parts) <= size else [" ".join(parts[i : i + size]) for i in range(len(parts) - size + 1)]
    assert unit_windows(body, size) == expected
