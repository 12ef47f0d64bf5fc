"""The first stage: a gate that clears most windows from their pieces alone, before any encoder runs.

Each window is the set of its piece unigrams and bigrams (token ids from the tokenizer the encoder uses).
Every gram seen in training carries a naive-Bayes log-count ratio, log p(gram | harmful) - log p(gram |
not harmful) over the training rows with Laplace smoothing `alpha` (the features of Wang and Manning's NBSVM,
2012, used directly as the classifier). A window's score is the sum of its grams' ratios over the square
root of their number; unseen grams count 0. A window scoring below its language's bound (`passes`) and
made at least half of pieces seen in training is benign without the encoder. The bound keeps
`first_stage_recall` of that language's harmful exemplars, scored by 5-fold cross-validation.

Why not the distilled static table's mean vector with linear heads (the first stage until heads version
5): left-one-development-set-out (eval1-9, each set scored by a gate trained without it, bound at 98%
cross-validated recall), the linear heads sent 45% / 41% (en / zh) of the plain benign texts on to the
encoder and kept 98.5% / 99.1% of the harmful ones; this gate sends 8.5% / 4.6% and keeps 99.6% / 99.9%.
At alpha 1.0 it sent 9.8% / 4.6% at 99.4% / 99.7%; there, unigrams alone sent 16% / 13% and dropping the
grams seen once 13% / 6%. A window's grams are looked up in a dict: 5-23 us a window of 8-56 pieces (score
and known).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

ALPHA = 0.5
# A text of this many pieces or fewer, judged whole (its one packed window), may have a bound of its own
# (`Gate.short_passes`); not the short last window of a long text, nor a lone sentence, which plain texts have many
# of. A short text has few grams, so its score rests on a handful of ratios: the attack gate, its bound at 95% of the
# cross-validated positives, cleared 11 of 160 self-harm positives of eval33 + eval34 (not trained on), 8 of them
# Chinese texts of 11-21 pieces, the form most self-harm misses took since eval26 (models/attack_heads.py
# SHORT_GATE_RECALL has the readings).
SHORT_TOKENS = 32
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def grams_of(ids: Sequence[int], vocab_size: int) -> set[int]:
    """The distinct grams of a window as int keys: a unigram is its id, a bigram (a, b) is
    vocab_size * (a + 1) + b."""
    keys = set(ids)
    keys.update(vocab_size * (a + 1) + b for a, b in itertools.pairwise(ids))
    return keys


def gram_keys(ids: Sequence[int], vocab_size: int) -> I64:
    """`grams_of` as a sorted int64 array (training counts them with numpy)."""
    return np.array(sorted(grams_of(ids, vocab_size)), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Gate:
    vocab_size: int  # the tokenizer's, which the keys depend on
    grams: I64  # sorted keys of every gram seen in training
    ratios: F64  # the log-count ratio of each
    passes: Mapping[str, float]  # per language: a window scoring below it needs no encoder
    # per language, the bound for a short text judged whole (one window of SHORT_TOKENS pieces or fewer); a language
    # without one uses `passes`
    short_passes: Mapping[str, float] = field(default_factory=dict)
    # the same as a dict, for scoring: a window's few dozen lookups cost 5-23 us in Python against 20-31 us
    # through numpy (8-56 pieces), whose per-call overhead dominates arrays this small
    _ratio_of: dict[int, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_ratio_of", dict(zip(self.grams.tolist(), self.ratios.tolist(), strict=True)))

    def score(self, ids: Sequence[int]) -> float:
        """Sum of the window's gram ratios over sqrt(number of grams); -inf for an empty window."""
        keys = grams_of(ids, self.vocab_size)
        if not keys:
            return -math.inf
        get = self._ratio_of.get
        return sum(get(k, 0.0) for k in keys) / math.sqrt(len(keys))

    def known(self, ids: Sequence[int]) -> float:
        """Share of the window's pieces seen in training: the gate cannot judge a text in a script that
        training never showed it (a window mostly of unseen pieces scores ~0 whatever it says)."""
        if not ids:
            return 1.0
        table = self._ratio_of
        return sum(1 for i in ids if i in table) / len(ids)

    def bound(self, ids: Sequence[int], lang: str, *, whole: bool = False) -> float:
        """The score at which a window goes on: the short bound for a short window that is a whole text (`whole`:
        its only packed window), the language's bound otherwise."""
        if whole and len(ids) <= SHORT_TOKENS and lang in self.short_passes:
            return self.short_passes[lang]
        return self.passes[lang]

    def needs_encoder(self, ids: Sequence[int], lang: str, score: float | None = None, *, whole: bool = False) -> bool:
        """Whether the window goes on to the encoder (`score`: its score, when already computed; `whole`: the
        window is the whole text, which a short one takes the short bound for)."""
        return ((self.score(ids) if score is None else score) >= self.bound(ids, lang, whole=whole)
                or self.known(ids) < 0.5)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"vocab_size": self.vocab_size, "grams": [int(k) for k in self.grams],
                                  "ratios": [round(float(r), 6) for r in self.ratios],
                                  "passes": {k: round(v, 6) for k, v in self.passes.items()}}
        if self.short_passes:  # absent from gates fitted without one (the builtin heads' file stays as it was)
            out["short_passes"] = {k: round(v, 6) for k, v in self.short_passes.items()}
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> Gate:
        passes = obj["passes"]
        short = obj.get("short_passes", {})
        assert isinstance(passes, dict) and isinstance(short, dict)
        return cls(int(str(obj["vocab_size"])), np.array(obj["grams"], dtype=np.int64),
                   np.array(obj["ratios"], dtype=np.float64), {str(k): float(v) for k, v in passes.items()},
                   {str(k): float(v) for k, v in short.items()})


@dataclass(frozen=True, slots=True)
class _Rows:
    """Training rows as one flat array of gram keys and the row each key belongs to."""

    keys: I64
    row: I64
    n: int

    @classmethod
    def of(cls, rows: Sequence[Sequence[int]], vocab_size: int) -> _Rows:
        per_row = [gram_keys(r, vocab_size) for r in rows]
        row = np.repeat(np.arange(len(rows), dtype=np.int64), [len(k) for k in per_row])
        keys = np.concatenate(per_row) if per_row else np.zeros(0, dtype=np.int64)
        return cls(keys, row, len(rows))


def _fit(rows: _Rows, positive: npt.NDArray[np.bool_], use: npt.NDArray[np.bool_],
         alpha: float) -> tuple[I64, F64]:
    """Sorted gram keys and their log-count ratios over the rows where `use` holds."""
    take = use[rows.row]
    grams, inverse = np.unique(rows.keys[take], return_inverse=True)
    pos_row = positive[rows.row[take]]
    n_pos, n_neg = int((positive & use).sum()), int((~positive & use).sum())
    in_pos = np.bincount(inverse, weights=pos_row.astype(np.float64), minlength=len(grams))
    in_neg = np.bincount(inverse, weights=(~pos_row).astype(np.float64), minlength=len(grams))
    ratios: F64 = np.log((in_pos + alpha) / (n_pos + 2 * alpha)) - np.log((in_neg + alpha) / (n_neg + 2 * alpha))
    return grams.astype(np.int64), ratios


def balanced_ratios(rows: _Rows, positive: npt.NDArray[np.bool_], use: npt.NDArray[np.bool_],
                    alpha: float) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """`_fit` with each class smoothed in proportion to its size (positives by `alpha`): with a few dozen
    positives against thousands of negatives, the same `alpha` for both makes every rare gram look harmful
    (models/user_heads.py `fit_gate` has the numbers). Used by the user gate and models/lexical.py."""
    take = use[rows.row]
    grams, inverse = np.unique(rows.keys[take], return_inverse=True)
    pos_row = positive[rows.row[take]]
    n_pos, n_neg = int((positive & use).sum()), int((~positive & use).sum())
    a_pos, a_neg = alpha, alpha * n_neg / max(1, n_pos)
    in_pos = np.bincount(inverse, weights=pos_row.astype(np.float64), minlength=len(grams))
    in_neg = np.bincount(inverse, weights=(~pos_row).astype(np.float64), minlength=len(grams))
    ratios: npt.NDArray[np.float64] = (np.log((in_pos + a_pos) / (n_pos + 2 * a_pos))
                                       - np.log((in_neg + a_neg) / (n_neg + 2 * a_neg)))
    return grams.astype(np.int64), ratios


def _scores(rows: _Rows, grams: I64, ratios: F64, which: npt.NDArray[np.bool_]) -> F64:
    """Gate scores of the rows where `which` holds (others 0)."""
    take = which[rows.row]
    keys, row = rows.keys[take], rows.row[take]
    at = np.minimum(np.searchsorted(grams, keys), len(grams) - 1)
    hit = np.where(grams[at] == keys, ratios[at], 0.0)
    sums = np.bincount(row, weights=hit, minlength=rows.n)
    counts = np.bincount(row, minlength=rows.n)
    out: F64 = np.where(counts > 0, sums / np.sqrt(np.maximum(counts, 1)), -np.inf)
    return out


def cross_val_scores(rows: Sequence[Sequence[int]], positive: Sequence[bool], folds: Sequence[int],
                     vocab_size: int, *, alpha: float = ALPHA) -> F64:
    """Each row's score from a gate fitted without its fold (`folds`: each row's, train.folds_of: the
    windows of one text share a fold, as the heads' cross-validation has them)."""
    flat = _Rows.of(rows, vocab_size)
    pos = np.asarray(positive, dtype=bool)
    fold = np.asarray(folds, dtype=np.int64)
    out = np.zeros(len(rows))
    for k in np.unique(fold):
        held = fold == k
        grams, ratios = _fit(flat, pos, ~held, alpha)
        out[held] = _scores(flat, grams, ratios, held)[held]
    return out


def fit(rows: Sequence[Sequence[int]], positive: Sequence[bool], passes: Mapping[str, float], vocab_size: int, *,
        alpha: float = ALPHA) -> Gate:
    """The gate over every row, with the given bounds."""
    pos = np.asarray(positive, dtype=bool)
    grams, ratios = _fit(_Rows.of(rows, vocab_size), pos, np.ones(len(rows), dtype=bool), alpha)
    return Gate(vocab_size, grams, ratios, dict(passes))
