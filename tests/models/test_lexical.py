"""models/lexical.py: per-category gram tables stacked with the heads' scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from models import gate, lexical, train
from models.errors import ModelsError
from models.gate import Gate
from models.lexical import LexicalStack

VOCAB = 50


def _rows() -> tuple[list[list[int]], list[int]]:
    """Category 1's positives carry piece 7, category 2's piece 9; the negatives neither, and share the rest."""
    rng = np.random.default_rng(0)
    ids: list[list[int]] = []
    labels: list[int] = []
    for label, marker in ((1, 7), (2, 9), (0, None), (0, None), (0, None)):
        for _ in range(30):
            row = [int(v) for v in rng.integers(10, 40, size=6)]
            if marker is not None:
                row.insert(int(rng.integers(0, 6)), marker)
            ids.append(row)
            labels.append(label)
    return ids, labels


def _stack(weights: list[list[float]] | None = None) -> LexicalStack:
    ids, labels = _rows()
    grams, ratios = lexical.fit_tables(ids, labels, 2, VOCAB)
    return LexicalStack(VOCAB, grams, ratios, np.array(weights or [[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]))


def test_a_category_table_scores_as_the_gate_scores_with_that_categorys_ratios() -> None:
    ids, labels = _rows()
    stack = _stack()
    flat = gate._Rows.of(ids, VOCAB)
    every = np.ones(len(ids), dtype=bool)
    for c in range(2):
        grams, ratios = gate.balanced_ratios(flat, np.array(labels) == c + 1, every, gate.ALPHA)
        assert np.array_equal(grams, stack.grams)
        assert np.allclose(stack.table_scores(ids)[:, c], gate._scores(flat, grams, ratios, every), atol=2e-2)


def test_a_categorys_marker_raises_its_own_table_only() -> None:
    stack = _stack()
    plain, with_7, with_9 = stack.table_scores([[11, 12, 13], [11, 7, 13], [11, 9, 13]])
    assert with_7[0] > plain[0] + 1 and with_9[1] > plain[1] + 1
    assert with_7[1] <= plain[1] + 0.5 and with_9[0] <= plain[0] + 0.5


def test_combine_weights_the_heads_logit_and_the_table() -> None:
    scores = np.array([[0.2, 0.7], [0.9, 0.1]])
    table = np.array([[1.0, -2.0], [0.0, 3.0]])
    heads_only = _stack([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert np.allclose(heads_only.combine(scores, table), scores)
    table_only = _stack([[0.0, 1.0, 0.5], [0.0, 1.0, 0.5]])
    assert np.allclose(table_only.combine(scores, table), 1 / (1 + np.exp(-(table + 0.5))))


def test_an_empty_window_and_unseen_pieces_score_zero() -> None:
    stack = _stack()
    assert np.array_equal(stack.table_scores([[], [45, 46, 47]]), np.zeros((2, 2)))


def test_json_round_trip_scores_as_the_fitted_stack() -> None:
    stack = _stack([[0.5, 0.8, -1.0], [0.6, 0.7, -0.5]])
    obj = json.loads(json.dumps(stack.to_json()))
    again = LexicalStack.from_json(obj)
    ids, _ = _rows()
    scores = np.random.default_rng(1).uniform(size=(len(ids), 2))
    assert np.allclose(again.adjust(scores, ids), stack.adjust(scores, ids), atol=1e-6)


def test_malformed_stacks_are_refused() -> None:
    obj = _stack().to_json()
    with pytest.raises(ValueError, match="malformed"):
        LexicalStack.from_json({**obj, "weights": "heavy"})
    with pytest.raises(ValueError, match="expected"):
        LexicalStack.from_json({**obj, "n_grams": int(str(obj["n_grams"])) + 1})
    reversed_grams = lexical._pack(_stack().grams[::-1], "<i8")
    with pytest.raises(ValueError, match="sorted"):
        LexicalStack.from_json({**obj, "grams_i64": reversed_grams})
    with pytest.raises(ValueError, match="expected \\(2, 3\\)"):
        LexicalStack.from_json({**obj, "weights": [[1.0, 1.0], [1.0, 1.0]]})
    with pytest.raises(ValueError, match="do not match"):
        LexicalStack(VOCAB, _stack().grams, _stack().ratios[:, :1], np.ones((2, 3)))


def test_fit_lexical_stack_learns_what_uninformative_heads_miss() -> None:
    ids, labels = _rows()
    y = np.array(labels)
    folds = list(train.folds_of(len(ids)))
    cv_heads = np.random.default_rng(2).uniform(0.2, 0.4, size=(len(ids), 2))  # the heads see nothing
    stack, cv = train.fit_lexical_stack(cv_heads, ids, labels, folds, VOCAB)
    for c in range(2):
        assert stack.weights[c, 1] > 0  # the table carries the evidence
        pos, neg = cv[y == c + 1, c], cv[y != c + 1, c]
        auc = (pos[:, None] > neg[None, :]).mean()  # cross-validated: some noise grams stay
        assert auc > 0.9, auc
    again, _ = train.fit_lexical_stack(cv_heads, ids, labels, folds, VOCAB)
    assert json.dumps(again.to_json()) == json.dumps(stack.to_json())  # deterministic


def test_extra_negatives_lower_the_grams_they_carry() -> None:
    ids, labels = _rows()
    folds = list(train.folds_of(len(ids)))
    cv_heads = np.full((len(ids), 2), 0.3)
    plain, _ = train.fit_lexical_stack(cv_heads, ids, labels, folds, VOCAB)
    more, _ = train.fit_lexical_stack(cv_heads, ids, labels, folds, VOCAB, extra_negatives=[[7, 11]] * 20,
                                      extra_folds=[i % train.FOLDS for i in range(20)])
    assert more.table_scores([[7]])[0, 0] < plain.table_scores([[7]])[0, 0]


def _heads(stack: LexicalStack | None) -> train.Heads:
    rng = np.random.default_rng(3)
    stage = train.StageHeads(rng.normal(size=4 * 384 + 1), rng.normal(size=(2, 4 * 384 + 1)),
                             rng.normal(size=(2, 4 * 384 + 1)))
    features = train.FeatureMap.fit(rng.normal(size=(20, 4 * 384)), [384] * 4)
    first = Gate(VOCAB, np.array([1, 2]), np.array([0.5, -0.5]), {"zh": 0.0, "en": 0.0})
    return train.Heads(("a", "b"), {"a": 2, "b": 2}, "k", first, stage, features, {"zh": 0.5, "en": 0.5}, 0.03,
                       0.3, lexical=stack)


def test_heads_with_a_lexical_stack_are_version_7_and_need_the_windows_ids(tmp_path: Path) -> None:
    raw = np.random.default_rng(4).normal(size=(3, 4 * 384))
    windows = [[11, 7, 13], [11, 9, 13], [20, 21]]
    plain, stacked = _heads(None), _heads(_stack([[0.5, 0.8, -1.0], [0.6, 0.7, -0.5]]))
    assert json.loads(stacked.to_json())["version"] == train.LEXICAL_VERSION == 7
    assert stacked.lexical is not None
    assert np.allclose(stacked.scores(raw, windows), stacked.lexical.adjust(plain.scores(raw), windows))
    with pytest.raises(ValueError, match="pass ids"):
        stacked.scores(raw)
    path = tmp_path / "heads.json"
    path.write_text(stacked.to_json())
    loaded = train.Heads.load(path)
    assert np.allclose(loaded.scores(raw, windows), stacked.scores(raw, windows), atol=1e-5)


def test_a_version_and_lexical_section_that_disagree_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "heads.json"
    path.write_text(_heads(None).to_json().replace('"version":5', '"version":7'))
    with pytest.raises(ModelsError, match="version 7 needs a lexical section"):
        train.Heads.load(path)
    path.write_text(_heads(_stack()).to_json().replace('"version":7', '"version":5'))
    with pytest.raises(ModelsError, match="version 5 may not have a lexical section"):
        train.Heads.load(path)
