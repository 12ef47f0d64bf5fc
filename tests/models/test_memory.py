"""The nearest-exemplar memory (models/memory.py): margins, the logit shift, storage, and the heads file that
carries one (models/train.py, version 6)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from models import train
from models.errors import ModelsError
from models.gate import Gate
from models.lexical import LexicalStack
from models.memory import MAX_SHIFT, NEGATIVE, ExemplarMemory

WIDTH, RANK = 12, 4


def _rows(seed: int, n: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, WIDTH))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _basis(x: np.ndarray, rank: int = RANK) -> np.ndarray:
    basis = train.principal_basis(x, rank)
    assert basis is not None
    return basis


def _memory(beta: float = 10.0) -> tuple[ExemplarMemory, np.ndarray, np.ndarray]:
    x = _rows(1, 30)
    labels = np.array([1] * 8 + [2] * 8 + [0] * 14)  # category index + 1, 0 for a negative
    return ExemplarMemory.fit(x, labels, 2, _basis(x), beta), x, labels


def test_a_row_equal_to_a_positive_is_nearest_to_it_and_one_equal_to_a_negative_is_not() -> None:
    memory, x, labels = _memory()
    m = memory.margins(x)
    assert m.shape == (30, 2)
    # a positive's own row is its nearest neighbour of its category (cosine 1, float16-rounded)
    for i in np.flatnonzero(labels == 1):
        others = (memory.rows[labels == 0] @ memory.rows[i]).max()
        assert m[i, 0] == pytest.approx(1.0 - others, abs=2e-3)
    assert (m[labels == 0] <= 1e-3).all()  # a negative's own row is its nearest negative
    assert list(memory.row_category[:8]) == [0] * 8 and list(memory.row_category[16:]) == [NEGATIVE] * 14


def test_rows_in_any_order_give_the_margins_of_a_brute_force_search() -> None:
    x = _rows(2, 40)
    labels = np.random.default_rng(3).permutation(np.array([1] * 9 + [2] * 11 + [0] * 20))
    basis = _basis(x)
    memory = ExemplarMemory.fit(x, labels, 2, basis, 10.0)
    assert list(memory.row_category) == [0] * 9 + [1] * 11 + [NEGATIVE] * 20  # kept grouped
    queries = _rows(4, 5)

    def unit(a: np.ndarray) -> np.ndarray:
        return a / np.linalg.norm(a, axis=1, keepdims=True)

    sims = unit(queries @ memory.basis) @ unit(x @ basis).T  # every row, in the order given
    nearest = [sims[:, labels == c].max(axis=1) for c in (1, 2, 0)]
    expected = np.stack([nearest[0] - nearest[2], nearest[1] - nearest[2]], axis=1)
    for n in (1, 2, 5):  # one window, and several (one product each)
        assert memory.margins(queries[:n]) == pytest.approx(expected[:n], abs=2e-3)  # float16 rows


def test_the_margin_moves_scores_in_logit_space_and_beta_zero_leaves_them() -> None:
    memory, x, labels = _memory(beta=10.0)
    p = np.full((30, 2), 0.3)
    moved = memory.adjust(p, x)
    m = memory.margins(x)
    assert ((moved > 0.3) == (m > 0)).all() and ((moved < 0.3) == (m < 0)).all()
    expected = 1 / (1 + np.exp(-(np.log(0.3 / 0.7) + np.clip(10.0 * m, -MAX_SHIFT, MAX_SHIFT))))
    assert np.allclose(moved, expected)
    # a window far from every exemplar cannot be moved further than MAX_SHIFT logits, however large beta is
    loud = ExemplarMemory.fit(x, labels, 2, _basis(x), 1000.0)
    p_low = np.full((30, 2), 0.01)
    top = 1 / (1 + np.exp(-(np.log(0.01 / 0.99) + MAX_SHIFT)))
    assert loud.adjust(p_low, x).max() == pytest.approx(top) and top < 0.5
    still = ExemplarMemory.fit(x, labels, 2, _basis(x), 0.0)
    assert np.allclose(still.adjust(p, x), p)


def test_json_round_trip_scores_as_the_fitted_memory() -> None:
    memory, x, _ = _memory()
    back = ExemplarMemory.from_json(json.loads(json.dumps(memory.to_json())))
    assert np.array_equal(back.margins(x), memory.margins(x))  # fit rounds to float16 as storage does
    assert back.beta == memory.beta and back.max_shift == MAX_SHIFT and back.n_categories == 2


def test_malformed_memories_are_refused() -> None:
    memory, x, labels = _memory()
    obj = memory.to_json()
    with pytest.raises(ValueError, match="values, expected"):
        ExemplarMemory.from_json({**obj, "rank": RANK + 1})
    with pytest.raises(ValueError, match="out of range"):
        ExemplarMemory.from_json({**obj, "row_category": [5] * len(labels)})
    with pytest.raises(ValueError, match="malformed"):
        ExemplarMemory.from_json({**obj, "beta": "high"})
    with pytest.raises(ValueError, match="malformed"):
        ExemplarMemory.from_json({**obj, "max_shift": -1.0})
    with pytest.raises(ValueError, match="every category needs a positive row"):  # scoring would fail on it later
        ExemplarMemory.from_json({**obj, "row_category": [NEGATIVE if c == 1 else int(c) for c in memory.row_category]})
    with pytest.raises(ValueError, match="categories without: \\[1\\]"):
        ExemplarMemory.fit(x, np.where(labels == 2, 0, labels), 2, _basis(x), 1.0)


def _heads(memory: ExemplarMemory | None) -> train.Heads:
    rng = np.random.default_rng(3)
    stage = train.StageHeads(rng.normal(size=4 * 384 + 1), rng.normal(size=(2, 4 * 384 + 1)),
                             rng.normal(size=(2, 4 * 384 + 1)))
    features = train.FeatureMap.fit(rng.normal(size=(20, 4 * 384)), [384] * 4)
    gate = Gate(10, np.array([1, 2]), np.array([0.5, -0.5]), {"zh": 0.0, "en": 0.0})
    return train.Heads(("a", "b"), {"a": 2, "b": 2}, "k", gate, stage, features, {"zh": 0.5, "en": 0.5}, 0.03, 0.3,
                       memory=memory)


def _encoder_rows_and_memory(seed: int) -> tuple[np.ndarray, np.ndarray, ExemplarMemory]:
    """40 rows of encoder outputs, their head features through `_heads`' feature map, and a memory fitted on them."""
    raw = np.random.default_rng(seed).normal(size=(40, 4 * 384))
    x = _heads(None).features.apply(raw)
    return raw, x, ExemplarMemory.fit(x, np.array([1] * 10 + [2] * 10 + [0] * 20), 2, _basis(x, 16), 20.0)


def test_heads_with_a_memory_are_version_6_and_score_through_it(tmp_path: Path) -> None:
    raw, x, memory = _encoder_rows_and_memory(4)
    plain = _heads(None)
    with_memory = _heads(memory)
    assert json.loads(plain.to_json())["version"] == train.HEADS_VERSION == 5  # older readers still take it
    assert json.loads(with_memory.to_json())["version"] == train.MEMORY_VERSION == 6
    assert np.allclose(with_memory.scores(raw), memory.adjust(plain.scores(raw), x))
    path = tmp_path / "heads.json"
    path.write_text(with_memory.to_json())
    loaded = train.Heads.load(path)
    assert loaded.memory is not None and np.allclose(loaded.scores(raw), with_memory.scores(raw), atol=1e-6)


def test_a_version_and_memory_that_disagree_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "heads.json"
    path.write_text(_heads(None).to_json().replace('"version":5', '"version":6'))
    with pytest.raises(ModelsError, match="version 6 needs a memory section"):
        train.Heads.load(path)


def test_reach_bounds_every_score_the_margins_can_make() -> None:
    memory, x, _ = _memory(beta=1000.0)  # margins far past the cap either way
    p = np.random.default_rng(5).uniform(0.001, 0.999, size=(30, 2))
    low, high = memory.reach(p)
    moved = memory.adjust(p, x)
    assert (low <= moved + 1e-12).all() and (moved <= high + 1e-12).all()
    assert np.isclose(moved, low).any() and np.isclose(moved, high).any()  # the cap is reached both ways


@pytest.mark.parametrize("stacked", [False, True])
def test_a_row_the_memory_cannot_lift_to_its_floor_is_scored_without_it(stacked: bool) -> None:
    raw, _, memory = _encoder_rows_and_memory(6)
    ids = [[1 + i % 3, 2] for i in range(len(raw))]
    lex = LexicalStack(10, np.array([1, 2, 3]), np.array([[1.0, -0.5], [0.2, 0.4], [-1.0, 0.8]]),
                       np.array([[0.8, 1.0, -0.3], [1.2, 0.5, 0.1]])) if stacked else None
    heads = dataclasses.replace(_heads(memory), lexical=lex)
    exact = heads.scores(raw, ids)
    without = dataclasses.replace(heads, memory=None).scores(raw, ids)
    floors = np.quantile(exact, 0.6, axis=0)  # some rows can reach them, some cannot
    floored = heads.scores(raw, ids, floors=floors)
    moved = ~np.isclose(floored, exact).all(axis=1)
    assert moved.any() and not moved.all()
    assert np.array_equal(floored[moved], without[moved])  # scored without the memory ...
    assert (floored[moved] < floors).all() and (exact[moved] < floors).all()  # ... and under the floors either way
    assert np.array_equal(floored[~moved], exact[~moved])
    assert np.array_equal(heads.scores(raw, ids, floors=np.zeros(2)), exact)  # a floor of 0: every row needs it
