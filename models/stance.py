"""Training of the injection stance (rules/stance.py, read by rules/discussed.py): does a text carry out a prompt
injection or talk about one?

Rows: the prompt-injection positives (label 0: carries it out) and hard negatives (label 1: about it, or merely like
it) of the read development sets (STANCE_SETS) and of models/data/attack_categories/prompt_injection.yaml. Features:
rules.stance.grams (a text's frame: quotations and stock phrases out), TF-IDF with sublinear counts and smoothed
idf, rows L2-normalised. Model: logistic regression, L2 penalty 1/C with C = 1, classes weighted to balance, fitted by
accelerated gradient descent on the sparse rows (deterministic: the same rows give the same file). n-grams seen in
fewer than MIN_DF rows are left out of the file (they weigh little; they still count toward a text's norm, at the
unseen idf).

Readings (session 36). Cross-validated by blocks of development sets (`python -m bench.eval_stance`: each block's
long texts judged through the request guard without the filter and with a stance fitted on every other block and the
exemplars), at THRESHOLDS and MIN_CHARS (read before rules/decode_only.py joined the filters):

    block    long pos  flagged  lost long neg  flagged  cleared
    17-30         206      197     0       14        0        0
    31-44         625      594     2      244        9        1
    45-60         882      848     1      578       17        1
    61-67         387      385     0      255       17        7
    68-74         385      379     2      252       24        9

The blocks of eval61-74 are the ones written after the heads' training sets (eval17-60): there the stance clears 16
of the 41 long look-alikes the product flagged, for 2 of its 764 flagged long positives.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models import evaluate
from models.categories import LANGS
from rules.stance import Stance, grams

STANCE_SETS = tuple(f"semantic_eval{n}.jsonl" for n in range(17, 98))
CATEGORY = "prompt_injection"
C = 1.0
# Per language (rules.stance.language). Chosen on the block cross-validation of session 36 (the blocks of the
# docstring, the stances' probabilities read directly): among the long texts the product flagged by soft findings
# alone over eval17-74, a single 0.6 lost 11 English positives and 1 Chinese for 7 and 11 look-alikes cleared;
# English at 0.7 lost 3 for 5, Chinese at 0.55 lost 2 for 13.
THRESHOLDS = {"en": 0.7, "zh": 0.55}
MIN_CHARS = 300
MIN_DF = 2
STEPS = 600


@dataclass(frozen=True, slots=True)
class Row:
    text: str
    about: bool  # a hard negative: about the attack (or like it), not the attack
    group: str  # the development set it came from, or "exemplars"


def development_rows(sets: Iterable[str] = STANCE_SETS) -> list[Row]:
    """The prompt-injection positives and hard negatives of the read development sets."""
    out: list[Row] = []
    for name in sets:
        for item in evaluate.load_items(evaluate.data_path(name)):
            if item.topic != CATEGORY:
                continue
            if item.label == CATEGORY:
                out.append(Row(item.text, False, name))
            elif item.label is None:
                out.append(Row(item.text, True, name))
    return out


def exemplar_rows() -> list[Row]:
    """The prompt-injection exemplars: positives and hard negatives, both languages."""
    from models.attack_heads import categories_dir
    from models.categories import load_category

    cat = load_category(categories_dir() / f"{CATEGORY}.yaml")
    out: list[Row] = []
    for lang in LANGS:
        out += [Row(t, False, "exemplars") for t in cat.positives.get(lang, ())]
        out += [Row(t, True, "exemplars") for t in cat.hard_negatives.get(lang, ())]
    return out


def _idf(n_rows: int, df: int) -> float:
    return math.log((1 + n_rows) / (1 + df)) + 1.0


@dataclass(frozen=True, slots=True)
class _Sparse:
    """Rows as CSR arrays: row r's columns are indices[indptr[r]:indptr[r+1]]."""

    indptr: npt.NDArray[np.int64]
    indices: npt.NDArray[np.int64]
    data: npt.NDArray[np.float64]
    n_cols: int

    def rows(self) -> npt.NDArray[np.int64]:
        """Each stored value's row (a row without n-grams stores none: a text of digits and symbols only)."""
        n_rows = len(self.indptr) - 1
        out: npt.NDArray[np.int64] = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(self.indptr))
        return out

    def dot(self, w: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = np.bincount(self.rows(), weights=self.data * w[self.indices],
                                                   minlength=len(self.indptr) - 1)
        return out

    def tdot(self, g: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        out: npt.NDArray[np.float64] = np.bincount(self.indices, weights=self.data * g[self.rows()],
                                                   minlength=self.n_cols)
        return out


def _matrix(counts: Sequence[Counter[str]], vocab: dict[str, int], idf: npt.NDArray[np.float64],
            unseen_idf: float) -> _Sparse:
    indptr = [0]
    indices: list[int] = []
    data: list[float] = []
    for c in counts:
        norm = 0.0
        row: list[tuple[int, float]] = []
        for g, n in c.items():
            j = vocab.get(g)
            v = (1.0 + math.log(n)) * (idf[j] if j is not None else unseen_idf)
            norm += v * v
            if j is not None:
                row.append((j, v))
        scale = 1.0 / math.sqrt(norm) if norm > 0 else 0.0
        for j, v in sorted(row):
            indices.append(j)
            data.append(v * scale)
        indptr.append(len(indices))
    return _Sparse(np.array(indptr, dtype=np.int64), np.array(indices, dtype=np.int64),
                   np.array(data, dtype=np.float64), len(vocab))


def _fit(x: _Sparse, y: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], c: float,
         steps: int) -> tuple[npt.NDArray[np.float64], float]:
    """Weighted L2 logistic regression (bias unpenalised) by Nesterov's accelerated gradient, step 1/L with L bounded
    by power iteration on the weighted Gram matrix."""
    n_cols = x.n_cols
    v = np.ones(n_cols) / math.sqrt(max(n_cols, 1))
    for _ in range(30):
        u = x.tdot(weights * x.dot(v))
        v = u / (np.linalg.norm(u) or 1.0)
    top = float(v @ x.tdot(weights * x.dot(v)))
    lipschitz = 0.25 * (top + float(weights.sum())) + 1.0 / c  # the bias column adds at most sum(weights)
    step = 1.0 / lipschitz
    w = np.zeros(n_cols)
    b = 0.0
    w_prev, b_prev = w.copy(), b
    for k in range(1, steps + 1):
        mom = (k - 1) / (k + 2)
        wy = w + mom * (w - w_prev)
        by = b + mom * (b - b_prev)
        z = np.clip(x.dot(wy) + by, -40, 40)
        p = 1.0 / (1.0 + np.exp(-z))
        g = weights * (p - y)
        gw = x.tdot(g) + wy / c
        gb = float(g.sum())
        w_prev, b_prev = w, b
        w = wy - step * gw
        b = by - step * gb
    return w, b


def fit(rows: Sequence[Row], *, c: float = C, thresholds: Mapping[str, float] | None = None, min_chars: int = MIN_CHARS,
        min_df: int = MIN_DF, steps: int = STEPS) -> Stance:
    """A stance fitted on `rows` (at least one of each label)."""
    if not any(r.about for r in rows) or all(r.about for r in rows):
        raise ValueError("the stance needs rows of both labels")
    features, bias, unseen_idf = fit_ngrams([grams(r.text) for r in rows], [r.about for r in rows], c=c,
                                            min_df=min_df, steps=steps)
    return Stance(features, bias, unseen_idf, dict(THRESHOLDS if thresholds is None else thresholds), min_chars)


def fit_ngrams(counts: Sequence[Counter[str]], labels: Sequence[bool], *, c: float = C, min_df: int = MIN_DF,
               steps: int = STEPS) -> tuple[dict[str, tuple[float, float]], float, float]:
    """An n-gram logistic model (rules.stance.logistic) fitted on each row's n-gram `counts` and label, classes
    weighted to balance: per n-gram seen in at least `min_df` rows its (idf, weight), the bias, the unseen idf."""
    df: Counter[str] = Counter()
    for cnt in counts:
        df.update(cnt.keys())
    kept = sorted(g for g, n in df.items() if n >= min_df)
    vocab = {g: i for i, g in enumerate(kept)}
    n = len(counts)
    idf = np.array([_idf(n, df[g]) for g in kept])
    unseen_idf = _idf(n, 1)
    x = _matrix(counts, vocab, idf, unseen_idf)
    y = np.array([1.0 if label else 0.0 for label in labels])
    n_pos = float(y.sum())
    weights = np.where(y == 1.0, n / (2 * n_pos), n / (2 * (n - n_pos)))
    w, b = _fit(x, y, weights, c, steps)
    return {g: (float(idf[i]), float(w[i])) for g, i in vocab.items()}, b, unseen_idf


def train(out: Path, *, hold_out: Sequence[str] = ()) -> Stance:
    """Fit the stance on STANCE_SETS (but `hold_out`) and the exemplars, and write it to `out`."""
    left = {h if h.endswith(".jsonl") else f"{h}.jsonl" for h in hold_out}
    unknown = left - set(STANCE_SETS)
    if unknown:
        raise ValueError(f"not a stance development set: {', '.join(sorted(unknown))} (models.stance.STANCE_SETS)")
    stance = fit([*development_rows(n for n in STANCE_SETS if n not in left), *exemplar_rows()])
    out.write_text(stance.to_json() + "\n", encoding="utf-8")
    return stance


__all__ = [
    "MIN_CHARS",
    "MIN_DF",
    "STANCE_SETS",
    "THRESHOLDS",
    "C",
    "Row",
    "development_rows",
    "exemplar_rows",
    "fit",
    "fit_ngrams",
    "train",
]
