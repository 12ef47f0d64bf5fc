"""`warden models train`: the gate, heads and thresholds from the category files' example phrases.

The first stage is a gate over the windows' pieces (models/gate.py). The second stage's encoder features (and
its early exit's) get factorized heads: one *intent* head (any category's positives against every hard
negative and benign text) and one *topic* head per category (its positives and hard negatives against the
rest). A window's score for category c is `sigmoid(intent) * sigmoid(topic_c)`. Hard negatives share the topic
but not the intent, which is learnt from all categories at once, so few examples per category suffice (5-fold
CV AUC 0.97 against 0.92 for one plain head per category on the shipped exemplars). A third head per category,
its own intent (its positives against its hard negatives and the plain benign texts), sees what the shared
intent head cannot ("transport a firearm legally" asks how to do something, but not a harmful thing): the
score is then the geometric mean `sqrt(sigmoid(intent) * sigmoid(topic_c) * sigmoid(intent_c))` (5-fold CV on
the 1139 shipped exemplars, second stage, at the 2% false-positive target: accuracy zh 0.927 -> 0.957, en
0.914 -> 0.936; AUC zh 0.989 -> 0.993, en 0.986 -> 0.992).

Heads are L2-regularized logistic regressions fitted by Newton's method in float64: no randomness, so the
same exemplars and the same build give the same heads (tested). Thresholds come from 5-fold
cross-validated scores (fixed fold assignment), per language:
- second stage `threshold[lang]`: the lowest value whose false-positive rate on that language's negatives
  is <= `target_fpr`, hard negatives weighted to HARD_NEGATIVE_SHARE of them (reported scores are rescaled
  so that it reads 0.5, models/semantic.py);
- the gate's `passes[lang]`: windows scoring below it are decided benign without the encoder; it keeps
  `first_stage_recall` of that language's positives;
- fusion `clear_below`: the lowest rescaled context level at which "semantic hit, or keyword hit with
  context >= level" still keeps each language's cross-validated false-positive rate within `target_fpr`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models import gate
from models.categories import LANGS, Category, Exemplar
from models.errors import ModelsError
from models.gate import Gate
from models.lexical import LexicalStack, cross_val_tables, fit_tables
from models.memory import ExemplarMemory, logit

F64 = npt.NDArray[np.float64]
HEADS_VERSION = 5  # 3: early-exit head on the encoder's EXIT_LAYER pooled states; 4: per-category intents;
# 5: the first stage is models.gate (the static table's heads and the static second-stage feature are gone)
# 6: version 5 with a nearest-exemplar memory (models/memory.py). A file without one is written as version 5, which
# older readers still take; one with a memory is version 6, which they refuse instead of scoring without it.
MEMORY_VERSION = 6
# 7: a lexical stack (models/lexical.py), with or without a memory; older readers refuse it rather than score
# without it.
LEXICAL_VERSION = 7
READABLE_VERSIONS = (HEADS_VERSION, MEMORY_VERSION, LEXICAL_VERSION)
# The early-exit bound is this fraction of the lowest cross-validated early score among the positive
# exemplars whose cross-validated full-depth score reaches a decision level (a margin: at 1.0 no positive
# training verdict changes by construction, and the held-out set is never used to choose it)
EXIT_MARGIN = 0.5
L2 = 1.0
SCALE = 10.0  # inputs are unit vectors; scaling them is the same as weaker regularization of the bias
FOLDS = 5
NEWTON_STEPS = 25
# The false-positive rates that place the thresholds count hard negatives (same topic, no intent) as this
# share of the negatives, plain benign texts as the rest: the mix the evaluation sets were written with (35
# hard negatives to 60 plain texts per language), fixed before any of them was scored this way. The
# exemplars hold ~2 hard negatives per plain text (they teach the topic/intent split), so counting them as
# they come prices a threshold for a stream of mostly hard negatives; served traffic is mostly plain.
HARD_NEGATIVE_SHARE = 35 / 95
# Chosen on the first three evaluation sets (models/data/eval/semantic_eval{,2,3}.jsonl), with the share above and
# the 3,724 exemplars of the time: 0.02 / 0.03 / 0.04 read fused accuracy 93.8-95.6% / 95.0-96.8% /
# 96.8-97.4% at FPR <= 0.5% / 1.1% / 1.6%. Thresholds then had a floor of 0.5, where both sat at 0.04.
# With the five development sets among the exemplars (6,204), the floor alone decided them (0.5 / 0.5); it
# is gone: the rule put them at 0.368 / 0.378 (zh / en), where the development texts' cross-validated
# scores read accuracy 97.3% / 97.4% at FPR 1.9% / 1.7% (at 0.5: 96.1% / 95.6%, FPR 1.5% / 1.1%). The sixth
# set, read to compare the two, is trained on as well (6,544 exemplars: 0.344 / 0.366); so are the seventh
# and eighth, each read once (7,224 exemplars, long negatives by windows: 0.341 / 0.341), and the ninth
# (7,624 exemplars with 60 plain LLM-platform prompts: 0.321 / 0.319), and the tenth and eleventh, each read
# for the first stage's choices (8,304 exemplars: 0.312 / 0.279). The twelfth was read once with them, and so
# was the thirteenth; the fourteenth and fifteenth (application-style prompts, a third of the plain ones
# 400-1200 characters) read fused FPR 4.2% and 8.9% with them and are trained on (8,984 exemplars: 0.292 /
# 0.302); the sixteenth was read once with those. Session 26 added the attack sets' plain chat (eval17-34, 3,186
# texts: models/cli.py, README "Trained with the attack sets' plain chat"): 12,170 exemplars, 0.254 / 0.244.
TARGET_FPR = 0.04


@dataclass(frozen=True, slots=True)
class StageHeads:
    """Weights of one stage: intent [D+1], topics [C, D+1], per-category intents [C, D+1]; last column the
    bias."""

    intent: F64
    topics: F64
    intents: F64

    def scores(self, x: npt.NDArray[np.floating]) -> F64:
        """[N, D] unit vectors -> [N, C] category scores in [0, 1]."""
        xs = np.hstack([np.asarray(x, np.float64) * SCALE, np.ones((len(x), 1))])
        intent = _sigmoid(xs @ self.intent)
        shared = intent[:, None] * _sigmoid(xs @ self.topics.T)
        out: F64 = np.sqrt(shared * _sigmoid(xs @ self.intents.T))
        return out

    def to_json(self) -> dict[str, object]:
        return {"intent": _round(self.intent), "topics": [_round(t) for t in self.topics],
                "intents": [_round(t) for t in self.intents]}

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> StageHeads:
        intent = np.array(obj["intent"], dtype=np.float64)
        topics = np.array(obj["topics"], dtype=np.float64)
        return cls(intent, topics, np.array(obj["intents"], dtype=np.float64))


@dataclass(frozen=True, slots=True)
class FeatureMap:
    """Raw second-stage inputs -> head features. The inputs are the encoder's outputs [N, P*384] (the
    sentence embedding and the intermediate layers' means). Each part is centred and L2-normalized, then
    the concatenation is centred and L2-normalized. The means are the training exemplars' (stored in
    heads)."""

    part_means: tuple[F64, ...]  # one mean per part; the widths follow
    total_mean: F64

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(len(m) for m in self.part_means)

    @classmethod
    def fit(cls, raw: F64, widths: Sequence[int]) -> FeatureMap:
        parts = _split(raw, widths)
        part_means = tuple(p.mean(axis=0) for p in parts)
        joined = np.hstack([_unit(p - m) for p, m in zip(parts, part_means, strict=True)])
        return cls(part_means, joined.mean(axis=0))

    def apply(self, raw: npt.NDArray[np.floating]) -> F64:
        parts = _split(np.asarray(raw, np.float64), self.widths)
        joined = np.hstack([_unit(p - m) for p, m in zip(parts, self.part_means, strict=True)])
        return _unit(joined - self.total_mean)

    def to_json(self) -> dict[str, object]:
        return {"part_means": [_round(m) for m in self.part_means], "total_mean": _round(self.total_mean)}

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> FeatureMap:
        means = obj["part_means"]
        assert isinstance(means, list)
        return cls(tuple(np.array(m, dtype=np.float64) for m in means),
                   np.array(obj["total_mean"], dtype=np.float64))


def _split(raw: F64, widths: Sequence[int]) -> list[F64]:
    if raw.shape[1] != sum(widths):
        raise ValueError(f"features have {raw.shape[1]} columns, the heads expect {sum(widths)} ({widths})")
    edges = np.cumsum([0, *widths])
    return [raw[:, a:b] for a, b in itertools.pairwise(edges)]


def _unit(x: F64) -> F64:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    out: F64 = x / np.maximum(norm, 1e-12)
    return out


@dataclass(frozen=True, slots=True)
class Heads:
    categories: tuple[str, ...]
    levels: dict[str, int]
    build_key: str
    gate: Gate  # the first stage, with its per-language bounds
    encoder: StageHeads
    features: FeatureMap  # encoder outputs -> encoder head inputs
    thresholds: dict[str, float]  # second stage, per language
    target_fpr: float
    clear_below: float  # fusion: rescaled context score under which a keyword hit is cleared
    early: StageHeads | None = None  # early-exit head on the pooled states after export.EXIT_LAYER layers
    early_features: FeatureMap | None = None
    early_exit: dict[str, float] | None = None  # per language: an early score below it ends the window there
    hard_negative_share: float | None = None  # the false-positive rates' negative mix (None: as the exemplars)
    memory: ExemplarMemory | None = None  # moves the encoder heads' scores (models/memory.py)
    lexical: LexicalStack | None = None  # stacks them with per-category gram tables (models/lexical.py)

    @property
    def version(self) -> int:
        return LEXICAL_VERSION if self.lexical is not None else HEADS_VERSION if self.memory is None \
            else MEMORY_VERSION

    def scores(self, features: npt.NDArray[np.floating], ids: Sequence[Sequence[int]] | None = None, *,
               floors: npt.NDArray[np.floating] | None = None) -> F64:
        """[N, P*384] encoder outputs -> [N, C] second-stage scores in [0, 1] (before thresholds). `ids`: the
        windows' content piece ids, which heads with a lexical stack need as well. `floors` ([C] or [N, C], raw
        scores): the lowest value any decision compares each category's score with. A row that no category's score
        could lift to its floor, whatever the memory said, is scored without the memory: its score stays under
        every floor either way, so no decision reads the difference, and the memory is the heads' dearest part
        (a product with every training row, ~1.6 ms a window against ~4 ms for the early graph)."""
        x = self.features.apply(features)
        out = self.encoder.scores(x)
        if self.lexical is not None and (ids is None or len(ids) != len(out)):
            raise ValueError("heads with a lexical stack score windows from their piece ids too: pass ids")
        table = self.lexical.table_scores(ids) if self.lexical is not None and ids is not None else None

        def stacked(s: F64) -> F64:
            return s if self.lexical is None or table is None else self.lexical.combine(s, table)

        if self.memory is not None:
            moves = np.ones(len(out), dtype=bool)
            if floors is not None:
                # the memory's shift is capped, and every step after it rises with the score
                low, high = (stacked(s) for s in self.memory.reach(out))
                moves = (np.maximum(low, high) >= floors).any(axis=1)
            if moves.all():
                out = self.memory.adjust(out, x)
            elif moves.any():
                out = out.copy()
                out[moves] = self.memory.adjust(out[moves], x[moves])
        return stacked(out)

    def to_json(self) -> str:
        obj = {
            "version": self.version,
            "build_key": self.build_key, "categories": list(self.categories),
            "levels": self.levels, "target_fpr": self.target_fpr,
            "thresholds": {k: round(v, 6) for k, v in self.thresholds.items()},
            "fusion_clear_below": round(self.clear_below, 6), "gate": self.gate.to_json(),
            "encoder": self.encoder.to_json(),
            "encoder_features": self.features.to_json(),
        }
        if self.hard_negative_share is not None:
            obj["hard_negative_share"] = round(self.hard_negative_share, 6)
        if self.early is not None and self.early_features is not None and self.early_exit is not None:
            obj |= {"early": self.early.to_json(), "early_features": self.early_features.to_json(),
                    "early_exit": {k: round(v, 6) for k, v in self.early_exit.items()}}
        if self.memory is not None:
            obj["memory"] = self.memory.to_json()
        if self.lexical is not None:
            obj["lexical"] = self.lexical.to_json()
        return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"

    @classmethod
    def load(cls, path: Path) -> Heads:
        obj = json.loads(path.read_text("utf-8"))
        if obj.get("version") not in READABLE_VERSIONS:
            raise ModelsError(f"{path}: heads version {obj.get('version')}, this Warden reads "
                              f"{' and '.join(map(str, READABLE_VERSIONS))}: run `warden models train`")
        version = obj["version"]
        if version != LEXICAL_VERSION and (version == MEMORY_VERSION) != ("memory" in obj):
            raise ModelsError(f"{path}: heads version {version} "
                              f"{'needs a' if version == MEMORY_VERSION else 'may not have a'} memory section")
        if (version == LEXICAL_VERSION) != ("lexical" in obj):
            raise ModelsError(f"{path}: heads version {version} "
                              f"{'needs a' if version == LEXICAL_VERSION else 'may not have a'} lexical section")
        return cls(
            categories=tuple(obj["categories"]), levels=dict(obj["levels"]), build_key=obj["build_key"],
            gate=Gate.from_json(obj["gate"]), encoder=StageHeads.from_json(obj["encoder"]),
            features=FeatureMap.from_json(obj["encoder_features"]),
            thresholds=dict(obj["thresholds"]),
            target_fpr=float(obj["target_fpr"]), clear_below=float(obj["fusion_clear_below"]),
            early=StageHeads.from_json(obj["early"]) if "early" in obj else None,
            early_features=FeatureMap.from_json(obj["early_features"]) if "early_features" in obj else None,
            early_exit=dict(obj["early_exit"]) if "early_exit" in obj else None,
            hard_negative_share=float(obj["hard_negative_share"]) if "hard_negative_share" in obj else None,
            memory=ExemplarMemory.from_json(obj["memory"]) if "memory" in obj else None,
            lexical=LexicalStack.from_json(obj["lexical"]) if "lexical" in obj else None,
        )


def _round(a: F64) -> list[float]:
    return [round(float(v), 7) for v in a]


def _sigmoid(z: F64) -> F64:
    out: F64 = 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))
    return out


def logistic(x: F64, t: F64, l2: float | None = None) -> F64:
    """Newton's method on the L2-regularized log loss (bias unregularized); deterministic.

    With more features than examples the fit runs in the row space of `x` (thin SVD): the L2 penalty is
    rotation-invariant and the optimum lies in that space, so the result is the same, only cheaper.
    """
    xs = x * SCALE
    basis = None
    if xs.shape[1] > xs.shape[0]:
        _, _, vt = np.linalg.svd(xs, full_matrices=False)
        basis = vt.T  # [D, r], orthonormal columns
        xs = xs @ basis
    xs = np.hstack([xs, np.ones((len(xs), 1))])
    w = np.zeros(xs.shape[1])
    reg = np.eye(xs.shape[1]) * (L2 if l2 is None else l2)
    reg[-1, -1] = 0.0
    for _ in range(NEWTON_STEPS):
        p = _sigmoid(xs @ w)
        grad = xs.T @ (p - t) + reg @ w
        hess = (xs * (p * (1 - p))[:, None]).T @ xs + reg + np.eye(xs.shape[1]) * 1e-9
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    if basis is not None:
        w = np.concatenate([basis @ w[:-1], w[-1:]])
    return w


def principal_basis(x: F64, rank: int | None) -> F64 | None:
    """[D, rank] orthonormal: the top right singular vectors of `x` (None when `rank` keeps every dimension).
    Heads fitted on `x @ basis` and lifted back (`lift`) score full-width rows the same way, and the L2 penalty
    is unchanged (the basis is orthonormal): only the directions of least variance are left out. A Newton step
    costs N * D^2; for user categories (`warden models train --categories`, models/user_heads.py) this cuts D
    from 1536 to user_heads.RANK."""
    if rank is None or rank >= min(x.shape):
        return None
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    basis: F64 = np.ascontiguousarray(vt[:rank].T)
    return basis


def lift(heads: StageHeads, basis: F64 | None) -> StageHeads:
    """Heads fitted on `x @ basis` as heads over `x`."""
    if basis is None:
        return heads

    def up(w: F64) -> F64:
        out: F64 = np.concatenate([basis @ w[:-1], w[-1:]])
        return out

    return StageHeads(up(heads.intent), np.stack([up(t) for t in heads.topics]),
                      np.stack([up(t) for t in heads.intents]))


def fit_stage(x: F64, labels: Sequence[int], topics: Sequence[int], n_categories: int) -> StageHeads:
    """labels/topics: category index + 1, 0 for none."""
    y = np.asarray(labels)
    tp = np.asarray(topics)
    intent = logistic(x, (y > 0).astype(np.float64))
    heads = np.stack([logistic(x, (tp == c + 1).astype(np.float64)) for c in range(n_categories)])
    own = []
    for c in range(n_categories):
        m = (tp == c + 1) | (tp == 0)  # the category's positives and hard negatives, and plain benign texts
        own.append(logistic(x[m], (y[m] == c + 1).astype(np.float64)))
    return StageHeads(intent, heads, np.stack(own))


def folds_of(n_rows: int, groups: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.int64]:
    """Each row's cross-validation fold: fixed and interleaved (every fold sees every category and
    language); the rows of one exemplar (`groups`) share a fold."""
    out: npt.NDArray[np.int64] = (np.arange(n_rows) if groups is None else groups) % FOLDS
    return out


@dataclass(frozen=True, slots=True)
class MemorySpec:
    """What a nearest-exemplar memory is fitted from: every row's head features [N, F], the projection [F, r]
    and the margin's weight."""

    x: F64
    basis: F64
    beta: float


def cross_val_scores(x: F64, labels: Sequence[int], topics: Sequence[int], n_categories: int, *,
                     groups: npt.NDArray[np.int64] | None = None, memory: MemorySpec | None = None) -> F64:
    """[N] max category score of each row from heads trained without its fold. `groups`: the exemplar
    each row comes from (the windows of one text share a fold), else one row per exemplar. `memory`: the
    scores are moved by a memory of the rows outside the fold as well."""
    out: F64 = cross_val_category_scores(x, labels, topics, n_categories, groups=groups, memory=memory).max(axis=1)
    return out


def cross_val_category_scores(x: F64, labels: Sequence[int], topics: Sequence[int], n_categories: int, *,
                              groups: npt.NDArray[np.int64] | None = None, memory: MemorySpec | None = None) -> F64:
    """`cross_val_scores` per category: [N, C]."""
    folds = folds_of(len(x), groups)
    out = np.zeros((len(x), n_categories))
    y = np.asarray(labels)
    tp = np.asarray(topics)
    for k in range(FOLDS):
        tr = folds != k
        heads = fit_stage(x[tr], list(y[tr]), list(tp[tr]), n_categories)
        scores = heads.scores(x[~tr])
        if memory is not None:
            held = ExemplarMemory.fit(memory.x[tr], y[tr], n_categories, memory.basis, memory.beta)
            scores = held.adjust(scores, memory.x[~tr])
        out[~tr] = scores
    return out


# The lexical stack's weights are an L2-regularized logistic regression on three inputs and thousands of rows:
# barely regularized (the penalty is on inputs scaled by SCALE, as `logistic` scales them).
LEXICAL_L2 = 1e-3


def fit_lexical_stack(cv_scores: F64, ids: Sequence[Sequence[int]], labels: Sequence[int], folds: Sequence[int],
                      vocab_size: int, *, extra_negatives: Sequence[Sequence[int]] = (),
                      extra_folds: Sequence[int] = ()) -> tuple[LexicalStack, F64]:
    """The lexical stack (models/lexical.py) over the rows' cross-validated [N, C] head scores, and the rows'
    cross-validated stacked scores [N, C]. The gram tables are fitted on the rows and on `extra_negatives`
    (windows the detector also judges, such as the sentences of negative texts read alone; `extra_folds`: theirs);
    the weights on the rows' cross-validated head and table scores, so that neither part's fit to its own rows
    sets them."""
    n, n_categories = cv_scores.shape
    all_ids = [*ids, *extra_negatives]
    all_labels = [*labels, *([0] * len(extra_negatives))]
    cv_tables = cross_val_tables(all_ids, all_labels, [*folds, *extra_folds], n_categories, vocab_size)[:n]
    y = np.asarray(labels)
    weights = np.stack([logistic(np.column_stack([logit(cv_scores[:, c]), cv_tables[:, c]]) / SCALE,
                                 (y == c + 1).astype(np.float64), l2=LEXICAL_L2) for c in range(n_categories)])
    grams, ratios = fit_tables(all_ids, all_labels, n_categories, vocab_size)
    stack = LexicalStack(vocab_size, grams, ratios, weights)
    return stack, stack.combine(cv_scores, cv_tables)


def threshold_for_fpr(neg_scores: F64, target_fpr: float, weights: F64 | None = None) -> float:
    """Lowest threshold t with mean(neg >= t) <= target_fpr (t just above the allowed negatives); with
    `weights`, the weighted share of negatives at or above t."""
    if weights is None:
        weights = np.ones(len(neg_scores))
    order = np.argsort(-neg_scores, kind="stable")
    s, share = neg_scores[order], np.cumsum(weights[order]) / weights.sum()
    allowed = int(np.searchsorted(share, target_fpr + 1e-12, side="right"))  # the top `allowed` fit the budget
    if allowed >= len(s):
        return 0.0
    return float(min(0.999, s[allowed] + 1e-6))


def negative_weights(topics: Sequence[int], negative: npt.NDArray[np.bool_], hard_share: float) -> F64:
    """Per exemplar: the weight a negative carries in a false-positive rate, so that hard negatives (a topic,
    no intent) make `hard_share` of it and plain benign texts the rest; 0 for positives."""
    tp = np.asarray(topics)
    hard, plain = negative & (tp > 0), negative & (tp == 0)
    w = np.zeros(len(tp))
    if hard.any():
        w[hard] = (hard_share if plain.any() else 1.0) / hard.sum()
    if plain.any():
        w[plain] = (1.0 - hard_share if hard.any() else 1.0) / plain.sum()
    return w


def threshold_for_recall(pos_scores: F64, recall: float) -> float:
    s = np.sort(pos_scores)
    drop = int(np.floor((1.0 - recall) * len(s)))
    return float(max(0.0, s[drop] - 1e-6)) if len(s) else 0.0


def _clear_level(rescaled: F64, has_kw: npt.NDArray[np.bool_], weights: F64, target_fpr: float) -> float:
    """The lowest clear level at which the fused rule (semantic hit, or keyword hit with context at or
    above the level) keeps the cross-validated false-positive rate (negatives weighted by `weights`, 0 for
    positives) within `target_fpr`: keyword hits are kept as often as the false-positive budget allows."""
    grid = np.linspace(0.02, 0.5, 49)
    sem = rescaled >= 0.5
    for g in grid:
        fused = sem | (has_kw & (rescaled >= g))
        if float(weights[fused].sum() / weights.sum()) <= target_fpr + 1e-12:
            return float(g)
    return 0.5


def per_text(scores: F64, groups: npt.NDArray[np.int64]) -> F64:
    """Each exemplar's score: the max over its rows (the detector flags a text when any window fires)."""
    out = np.full(int(groups.max()) + 1, -np.inf)
    np.maximum.at(out, groups, scores)
    return out


def train(categories: Sequence[Category], examples: Sequence[Exemplar], ids: Sequence[Sequence[int]],
          encoder_raw: F64, *, vocab_size: int, early_raw: F64 | None = None, build_key: str,
          target_fpr: float = TARGET_FPR, first_stage_recall: float = 0.98,
          hard_negative_share: float | None = HARD_NEGATIVE_SHARE,
          groups: Sequence[int] | None = None, rank: int | None = None, memory_rank: int | None = None,
          memory_beta: float = 0.0, lexical: bool = False, extra_negatives: Sequence[Sequence[int]] = (),
          extra_folds: Sequence[int] = ()) -> Heads:
    """The gate and heads from feature rows: `ids[i]` row i's content piece ids (the gate's input),
    `encoder_raw[i]` its encoder features. `groups[i]`: the exemplar row i belongs to, ascending from 0 (a negative
    exemplar longer than one window gives one row per window, as the detector will judge it; positives one
    row, since which window holds the intent is unknown); `examples[i]` is that exemplar. Thresholds and
    bounds are placed on exemplars, each scored by its highest row. `rank`: fit the heads on that many principal
    directions of the features (`principal_basis`), for speed; None fits them on every dimension. `memory_rank`:
    keep a nearest-exemplar memory of every row (models/memory.py) on that many principal directions, its margin
    weighted by `memory_beta`; thresholds and the early exit are then placed on the moved scores. `lexical`: stack
    the scores with per-category gram tables (models/lexical.py, `fit_lexical_stack`; `extra_negatives`,
    `extra_folds`: more negative windows for the tables, with their folds); thresholds and the early exit are then
    placed on the stacked scores."""
    g = np.arange(len(examples)) if groups is None else np.asarray(groups, dtype=np.int64)
    first_rows = np.unique(g, return_index=True)[1]
    if len(first_rows) != int(g.max()) + 1 or not (np.diff(g) >= 0).all():
        raise ValueError("groups must number the exemplars 0, 1, 2, ... in row order")
    if any(examples[int(i)].label is not None for i in np.flatnonzero(np.bincount(g)[g] > 1)):
        raise ValueError("only negative exemplars may have several rows")
    names = [c.name for c in categories]
    features = FeatureMap.fit(encoder_raw, [384] * (encoder_raw.shape[1] // 384))
    encoder_x = features.apply(encoder_raw)
    labels = [names.index(e.label) + 1 if e.label else 0 for e in examples]
    topics = [names.index(e.topic) + 1 if e.topic else 0 for e in examples]
    langs = np.array([e.lang for e in examples])
    pos = np.asarray(labels) > 0
    keywords = [kw.lower() for c in categories for lang in LANGS for kw in c.keywords[lang]]
    has_kw = np.array([any(kw in e.text.lower() for kw in keywords) for e in examples], dtype=bool)
    encoder_basis = principal_basis(encoder_x, rank)
    encoder_fit = encoder_x if encoder_basis is None else encoder_x @ encoder_basis
    spec = None
    if memory_rank is not None:
        memory_basis = principal_basis(encoder_x, memory_rank)
        if memory_basis is None:
            raise ValueError(f"memory_rank {memory_rank} keeps every dimension of {encoder_x.shape}: pick a lower one")
        spec = MemorySpec(encoder_x, memory_basis, memory_beta)
    cv_categories = cross_val_category_scores(encoder_fit, labels, topics, len(names), groups=g, memory=spec)
    stack = None
    if lexical:
        stack, cv_categories = fit_lexical_stack(cv_categories, ids, labels, list(folds_of(len(g), g)), vocab_size,
                                                 extra_negatives=extra_negatives, extra_folds=extra_folds)
    cv_rows = cv_categories.max(axis=1)
    cv_gate = gate.cross_val_scores(ids, list(pos), list(folds_of(len(g), g)), vocab_size)
    # per exemplar from here on (t_*): a negative is scored by its highest row; positives have one row
    cv_enc = per_text(cv_rows, g)
    t_langs, t_pos, t_kw = langs[first_rows], pos[first_rows], has_kw[first_rows]
    t_topics = np.asarray(topics)[first_rows]
    thresholds = {}
    passes: dict[str, float] = {}
    rescaled = np.zeros(len(first_rows))
    weights = np.zeros(len(first_rows))
    for lang in LANGS:
        m = t_langs == lang
        weights[m] = negative_weights(t_topics[m], ~t_pos[m], hard_negative_share) \
            if hard_negative_share is not None else (~t_pos[m]).astype(np.float64)
        thresholds[lang] = threshold_for_fpr(cv_enc[m & ~t_pos], target_fpr, weights[m & ~t_pos])
        passes[lang] = threshold_for_recall(cv_gate[(langs == lang) & pos], first_stage_recall)
        th = thresholds[lang]
        rescaled[m] = np.where(cv_enc[m] < th, 0.5 * cv_enc[m] / th, 0.5)
    clear_below = max(_clear_level(rescaled[t_langs == lang], t_kw[t_langs == lang], weights[t_langs == lang],
                                   target_fpr) for lang in LANGS)
    early = early_features = early_exit = None
    if early_raw is not None:
        early_features = FeatureMap.fit(early_raw, [early_raw.shape[1]])
        early_x = early_features.apply(early_raw)
        early_basis = principal_basis(early_x, rank)
        early_fit = early_x if early_basis is None else early_x @ early_basis
        cv_early = cross_val_scores(early_fit, labels, topics, len(names), groups=g)
        early = lift(fit_stage(early_fit, labels, topics, len(names)), early_basis)
        early_exit = {}
        for lang in LANGS:
            m = langs == lang
            # the lowest raw full-depth score that decides anything: a semantic hit, or a context level
            # that keeps a keyword hit (rescaled clear_below). Only positives bound the exit: an exit moves
            # a window toward benign, never an error on a negative (with clear_below 0.14 a benign
            # "我想学吉他" at 0.22 x threshold set the zh bound, and most windows ran the late graph)
            level = thresholds[lang] * min(1.0, 2.0 * clear_below)
            decided = cv_early[m & pos & (cv_rows >= level)]  # positives: one row each
            early_exit[lang] = EXIT_MARGIN * float(decided.min()) if len(decided) else 0.0
    return Heads(
        categories=tuple(names), levels={c.name: c.level for c in categories}, build_key=build_key,
        gate=gate.fit(ids, list(pos), passes, vocab_size),
        encoder=lift(fit_stage(encoder_fit, labels, topics, len(names)), encoder_basis), features=features,
        thresholds=thresholds, target_fpr=target_fpr, clear_below=clear_below,
        early=early, early_features=early_features, early_exit=early_exit, hard_negative_share=hard_negative_share,
        memory=None if spec is None else ExemplarMemory.fit(encoder_x, np.asarray(labels), len(names), spec.basis,
                                                            spec.beta),
        lexical=stack,
    )
