from __future__ import annotations

import json
import math

import numpy as np
import pytest

from models import gate, train

V = 100  # a toy vocabulary


def test_gram_keys_are_the_distinct_unigrams_and_bigrams() -> None:
    keys = gate.gram_keys([5, 7, 5, 7], V)
    assert keys.tolist() == sorted({5, 7, V * 6 + 7, V * 8 + 5})  # (5, 7) twice, (7, 5) once
    assert gate.gram_keys([3], V).tolist() == [3]
    assert gate.gram_keys([], V).tolist() == []


def _toy() -> gate.Gate:
    # 1 and 2 appear only in harmful rows, 3 only in benign ones, 4 in both
    rows = [[1, 4], [2, 4], [1, 2], [3, 4], [3], [3, 4]]
    positive = [True, True, True, False, False, False]
    return gate.fit(rows, positive, {"zh": 0.5, "en": 0.0}, V)


def test_ratios_are_smoothed_log_count_ratios() -> None:
    g = _toy()
    a = gate.ALPHA
    ratio = dict(zip(g.grams.tolist(), g.ratios.tolist(), strict=True))
    assert ratio[1] == pytest.approx(math.log((2 + a) / (3 + 2 * a)) - math.log(a / (3 + 2 * a)))
    assert ratio[1] > 0 > ratio[3]
    assert ratio[4] == pytest.approx(math.log((2 + a) / (3 + 2 * a)) - math.log((2 + a) / (3 + 2 * a)))
    assert V * 2 + 4 in ratio  # the bigram (1, 4)


def test_score_sums_the_known_grams_over_the_root_of_their_number() -> None:
    g = _toy()
    ratio = dict(zip(g.grams.tolist(), g.ratios.tolist(), strict=True))
    # grams of [1, 4, 99]: 1, 4, 99 (unseen), (1, 4), (4, 99) (unseen)
    expected = (ratio[1] + ratio[4] + ratio[V * 2 + 4]) / math.sqrt(5)
    assert g.score([1, 4, 99]) == pytest.approx(expected)
    assert g.score([]) == -math.inf


def test_a_window_goes_on_when_it_scores_at_its_bound_or_the_gate_has_not_seen_it() -> None:
    g = _toy()
    assert g.needs_encoder([1, 2], "zh") and not g.needs_encoder([3], "zh")
    assert g.known([3, 98, 99]) == pytest.approx(1 / 3) and g.known([]) == 1.0
    assert g.score([3, 98, 99]) < g.passes["zh"] and g.needs_encoder([3, 98, 99], "zh")  # mostly unseen


def test_round_trip() -> None:
    g = _toy()
    again = gate.Gate.from_json(json.loads(json.dumps(g.to_json())))
    assert again.vocab_size == V and again.grams.tolist() == g.grams.tolist()
    assert np.allclose(again.ratios, g.ratios, atol=1e-6) and again.passes == g.passes


def test_cross_validation_holds_out_the_windows_of_one_text_together() -> None:
    """A gram seen only in two windows of one benign text: scored apart, each window sees the other's
    gram in training (negative ratio); grouped, the gram is unseen when they are scored."""
    rows = [[1]] * 10 + [[2]] * 10 + [[7], [7]]
    positive = [True] * 10 + [False] * 12
    apart = gate.cross_val_scores(rows, positive, train.folds_of(22).tolist(), V)
    grouped_folds = train.folds_of(22, np.array([*range(21), 20])).tolist()  # the last two rows are one text
    grouped = gate.cross_val_scores(rows, positive, grouped_folds, V)
    assert (apart[-2:] < 0).all() and (grouped[-2:] == 0).all()
    again = gate.cross_val_scores(rows, positive, grouped_folds, V)
    assert grouped.tolist() == again.tolist()


def _with_short_bound() -> gate.Gate:
    g = _toy()
    return gate.Gate(g.vocab_size, g.grams, g.ratios, {"zh": 100.0, "en": 100.0}, {"zh": -100.0})


def test_a_short_text_judged_whole_takes_the_short_bound() -> None:
    g = _with_short_bound()
    short, long = [3, 4], [3, 4] * (gate.SHORT_TOKENS // 2 + 1)
    assert g.bound(short, "zh", whole=True) == -100.0 and g.needs_encoder(short, "zh", whole=True)
    assert not g.needs_encoder(short, "zh")  # a lone sentence, or the short last window of a long text
    assert g.bound(long, "zh", whole=True) == 100.0 and not g.needs_encoder(long, "zh", whole=True)
    assert g.bound(short, "en", whole=True) == 100.0  # a language without a short bound keeps its own


def test_round_trip_keeps_the_short_bounds_and_a_gate_without_them_writes_none() -> None:
    g = _with_short_bound()
    again = gate.Gate.from_json(json.loads(json.dumps(g.to_json())))
    assert again.short_passes == {"zh": -100.0}
    assert "short_passes" not in _toy().to_json() and gate.Gate.from_json(_toy().to_json()).short_passes == {}
