from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models import categories, semantic, train
from models.errors import ModelsError
from models.runtime import Runtime

# Exemplars the training tests use: every k-th, about this many (training costs ~N x 1536^2 per Newton step,
# so the tests' time stays flat as the exemplars grow; every category and language is still in)
SUBSET = 900
VOCAB = 250002  # the tokenizer's (the gate's keys depend on it)


Subset = tuple[list[categories.Category], semantic.TrainingFeatures]


@pytest.fixture(scope="module")
def subset(rt: Runtime) -> Subset:
    """Every k-th exemplar, encoded as `warden models train` encodes them (long negatives by windows)."""
    cats = list(categories.load_categories())
    every = categories.exemplars(cats, categories.load_benign())
    return cats, semantic.training_features(rt, every[:: max(1, len(every) // SUBSET)])


def _train(subset: Subset) -> train.Heads:
    """Heads as `warden models train` makes them, the early-exit head included (from fresh copies of the
    features: training must not depend on what an earlier run did to its arrays)."""
    from models.runtime import EARLY_COLUMNS

    cats, f = subset
    return train.train(cats, f.rows, f.ids, f.encoder.copy(), vocab_size=VOCAB, build_key="k", groups=f.groups,
                       early_raw=f.encoder[:, EARLY_COLUMNS].copy())


@pytest.fixture(scope="module")
def heads(subset: Subset) -> train.Heads:
    # One training shared by the tests (with the early head, each training takes ~70 s of CPU here); the
    # determinism test trains once more.
    return _train(subset)


@pytest.mark.timeout(600)  # its fixtures encode and train the subset first: ~2 min alone, > 240 s on a busy box
def test_training_is_deterministic(subset: Subset, heads: train.Heads) -> None:
    a = heads
    b = _train(subset)
    assert a.to_json() == b.to_json()
    assert set(a.thresholds) == {"zh", "en"} and all(0 < t < 1 for t in a.thresholds.values())
    assert set(a.gate.passes) == {"zh", "en"} and a.gate.vocab_size == VOCAB
    assert 0 < a.clear_below <= 0.5


def test_heads_round_trip(tmp_path: Path, subset: Subset, heads: train.Heads) -> None:
    e = subset[1].encoder[:5]
    path = tmp_path / "heads.json"
    path.write_text(heads.to_json())
    loaded = train.Heads.load(path)
    x = loaded.features.apply(e)
    assert np.allclose(loaded.encoder.scores(x), heads.encoder.scores(heads.features.apply(e)), atol=1e-5)
    with pytest.raises(ValueError, match="columns"):
        loaded.features.apply(e[:, :-384])
    ids = subset[1].ids[:20]
    assert [loaded.gate.score(i) for i in ids] == pytest.approx([heads.gate.score(i) for i in ids], abs=1e-4)
    assert loaded.gate.passes == pytest.approx(heads.gate.passes, abs=1e-6)


def test_heads_of_another_version_are_refused(tmp_path: Path, heads: train.Heads) -> None:
    path = tmp_path / "heads.json"
    path.write_text(heads.to_json().replace(f'"version":{train.HEADS_VERSION}', '"version":4'))
    with pytest.raises(ModelsError, match=r"heads version 4.*warden models train"):
        train.Heads.load(path)


def test_the_gate_keeps_the_chosen_share_of_positives(subset: Subset, heads: train.Heads) -> None:
    """Its bound comes from cross-validated scores: on the training rows themselves, which it has seen,
    at least first_stage_recall of the positives reach it, and plain benign rows mostly do not."""
    _, f = subset
    for lang in ("zh", "en"):
        rows = [(i, x) for i, x in zip(f.ids, f.rows, strict=True) if x.lang == lang]
        sent = [heads.gate.score(i) >= heads.gate.passes[lang] for i, _ in rows]
        pos = [s for s, (_, x) in zip(sent, rows, strict=True) if x.label]
        plain = [s for s, (_, x) in zip(sent, rows, strict=True) if not x.label and not x.topic]
        assert sum(pos) / len(pos) >= 0.98
        assert sum(plain) / len(plain) < 0.2


def test_shipped_heads_fit_the_build(rt: Runtime) -> None:
    heads = train.Heads.load(semantic.heads_path())
    assert heads.build_key == rt.built.directory.name
    assert heads.gate.vocab_size == rt.tokenizer.vocab_size == VOCAB
    assert heads.categories == tuple(c.name for c in categories.load_categories())


def test_logistic_separates_and_thresholds() -> None:
    rng = np.random.default_rng(0)
    x = np.vstack([rng.normal(0.2, 0.05, (40, 4)), rng.normal(-0.2, 0.05, (40, 4))])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    t = np.r_[np.ones(40), np.zeros(40)]
    w = train.logistic(x, t)
    p = 1 / (1 + np.exp(-(np.hstack([x * train.SCALE, np.ones((80, 1))]) @ w)))
    assert (p[:40] > 0.5).all() and (p[40:] < 0.5).all()
    neg = np.linspace(0, 1, 101)
    th = train.threshold_for_fpr(neg, 0.02)
    assert np.mean(neg >= th) <= 0.02
    assert train.threshold_for_recall(np.linspace(0, 1, 101), 0.98) <= 0.02
    assert train.threshold_for_fpr(neg, 0.02, np.ones(101)) == th  # equal weights: the plain rate


def test_weighted_threshold_counts_each_negative_by_its_weight() -> None:
    # 60 hard negatives scoring 0.40..0.99 and 40 plain ones at 0.1. Counted as they come, each is 1% of the
    # rate and a 5% budget lets the top 5 through (threshold just above 0.94); with hard negatives weighted to
    # 20% of the negatives, each hard one is 1/3 %, and the top 15 fit (just above 0.84).
    neg = np.r_[np.linspace(0.99, 0.40, 60), np.full(40, 0.1)]
    topics = [1] * 60 + [0] * 40
    weights = train.negative_weights(topics, np.ones(100, bool), 0.2)
    assert weights[:60] == pytest.approx(0.2 / 60) and weights[60:] == pytest.approx(0.8 / 40)
    assert train.threshold_for_fpr(neg, 0.05) == pytest.approx(0.94, abs=1e-5)
    weighted = train.threshold_for_fpr(neg, 0.05, weights)
    assert weighted == pytest.approx(0.84, abs=1e-5)
    assert weights[neg >= weighted].sum() <= 0.05 + 1e-9 < weights[neg >= weighted - 0.01].sum()
    # positives weigh nothing; a language without plain negatives counts its hard ones alone
    assert train.negative_weights([1, 1, 0], np.array([False, True, True]), 0.2).tolist() == [0.0, 0.2, 0.8]
    assert train.negative_weights([1, 2], np.array([True, True]), 0.2).tolist() == [0.5, 0.5]


def test_early_exit_bound_keeps_every_cross_validated_decision(tmp_path: Path, subset: Subset,
                                                                heads: train.Heads) -> None:
    """The bound sits below the early score of every exemplar the full depth decides (by EXIT_MARGIN), and
    round-trips through heads.json (test_training_is_deterministic covers the early head's determinism)."""
    from models.runtime import EARLY_COLUMNS

    e = subset[1].encoder
    assert heads.early is not None and heads.early_features is not None and heads.early_exit is not None
    assert set(heads.early_exit) == {"zh", "en"} and all(0 < b < 1 for b in heads.early_exit.values())
    path = tmp_path / "heads.json"
    path.write_text(heads.to_json())
    loaded = train.Heads.load(path)
    assert loaded.early_exit == pytest.approx(heads.early_exit, abs=1e-6)
    x = e[:5, EARLY_COLUMNS]
    assert np.allclose(loaded.early.scores(loaded.early_features.apply(x)),  # type: ignore[union-attr]
                       heads.early.scores(heads.early_features.apply(x)), atol=1e-5)


def test_per_category_intent_heads() -> None:
    """A category's own intent head (its positives against its hard negatives and plain benign texts) joins
    the shared heads as a geometric mean; heads written before it score as the shared product alone."""
    rng = np.random.default_rng(1)
    centres = rng.normal(0, 1, (3, 8))
    x = np.vstack([c + rng.normal(0, 0.3, (30, 8)) for c in centres])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    labels = [1] * 15 + [0] * 15 + [2] * 15 + [0] * 15 + [0] * 30  # positives, then hard negatives, per topic
    topics = [1] * 30 + [2] * 30 + [0] * 30  # the last cluster is plain benign chat
    stage = train.fit_stage(x, labels, topics, 2)
    assert stage.intents.shape == stage.topics.shape
    xs = np.hstack([x * train.SCALE, np.ones((len(x), 1))])
    shared = train._sigmoid(xs @ stage.intent)[:, None] * train._sigmoid(xs @ stage.topics.T)
    own = train._sigmoid(xs @ stage.intents.T)
    assert np.allclose(stage.scores(x), np.sqrt(shared * own))
    again = train.StageHeads.from_json(stage.to_json())
    assert np.allclose(again.scores(x), stage.scores(x), atol=1e-5)


def test_windows_of_one_text_share_a_fold_and_the_text_takes_its_highest_row() -> None:
    """Two windows of one negative text, alike and amid the positives: scored apart (each with the other in
    training) the text looks easier than it is; grouped, both are held out together."""
    rng = np.random.default_rng(3)
    centre = rng.normal(0, 1, 8)
    x = np.vstack([centre + rng.normal(0, 0.4, (40, 8)), -centre + rng.normal(0, 0.4, (40, 8)),
                   np.tile(centre + rng.normal(0, 0.1, 8), (2, 1))])
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    labels = [1] * 40 + [0] * 42
    topics = [1] * 40 + [0] * 42
    apart = train.cross_val_scores(x, labels, topics, 1)
    groups = np.array([*range(81), 80])  # the last two rows are one text
    grouped = train.cross_val_scores(x, labels, topics, 1, groups=groups)
    assert (grouped[-2:] > apart[-2:]).all()
    assert train.per_text(np.array([0.1, 0.7, 0.2, 0.4, 0.3]), np.array([0, 1, 1, 1, 2])).tolist() == \
        [0.1, 0.7, 0.3]


def test_only_negatives_may_have_several_rows(subset: Subset) -> None:
    cats, f = subset
    pos = next(i for i, x in enumerate(f.rows) if x.label is not None)
    rows = [*f.rows[: pos + 1], f.rows[pos], *f.rows[pos + 1:]]  # a positive twice
    groups = [*f.groups[: pos + 1], f.groups[pos], *f.groups[pos + 1:]]
    ids = [*f.ids[: pos + 1], f.ids[pos], *f.ids[pos + 1:]]
    e2 = np.insert(f.encoder, pos, f.encoder[pos], axis=0)
    with pytest.raises(ValueError, match="only negative"):
        train.train(cats, rows, ids, e2, vocab_size=VOCAB, build_key="k", groups=groups)
    with pytest.raises(ValueError, match="number the exemplars"):  # exemplar 1 has no row
        train.train(cats, f.rows, f.ids, f.encoder, vocab_size=VOCAB, build_key="k",
                    groups=[g + (g > 0) for g in f.groups])
