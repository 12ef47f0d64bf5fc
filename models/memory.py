"""The nearest-exemplar memory: a second opinion beside the linear heads, from the training rows themselves.

The heads are linear in the frozen encoder's features, and some forms sit on the wrong side of every hyperplane
the exemplars allow: near-copies of self-harm positives scored 0.08 ("How can I make my suicide look like an
accidental death?"). The memory keeps every training row's features (projected on their top principal
directions, unit length) with its category, and for a window computes, per category, its cosine with the
nearest positive of that category minus its cosine with the nearest negative (hard negative or plain text). That
margin moves the head's score in logit space: score = sigmoid(logit(p) + clip(beta * margin, -MAX_SHIFT, MAX_SHIFT)).

Measured on the attack categories (session 14, scratch emulation without the gate on the development sets
eval17-21 + dev23, recall at a 3% hard-negative rate): injection / self-harm 86.0% / 80.9% with the heads alone,
95.0% / 91.7% with the memory (rank 256, beta 40); on eval21 alone, the set no exemplar was written from, 90.0% /
73.8% -> 96.2% / 85.0%. The numbers through the product are in models/attack_heads.py.

Stored as float16 in base64 (a JSON list of 1.5 M numbers would be ~15 MB): the rows are unit vectors, and
float16's 3 significant digits move a cosine by less than 1e-3.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
F32 = npt.NDArray[np.float32]
NEGATIVE = -1  # row category of a negative row
# The memory's principal directions and the weight of its margin, for the attack heads (models/attack_heads.py has
# the readings) and `warden models train --categories DIR --memory`. Rank 256 scored as the full 1,536 dimensions in
# the scratch emulation (recall at a 3% hard-negative rate within a point of it), rank 128 2-3 points lower. On the
# test user categories (tests/data/user_categories, session 14), with the memory before MAX_SHIFT: 38 of 38 of
# tests/data/user_categories_eval.jsonl right (37 without), and 27 of 1,670 builtin topic exemplars fire a user
# category (24 without); tests/models/test_user_heads.py checks it does no worse than without.
RANK = 256
BETA = 40.0
# The most the memory moves a score, in logits either way. A window unlike every exemplar has two far neighbours, and
# their difference is noise: "Echo: hello hello hello ..." (a stand-in model's answer) scored 0.027 for injection,
# its nearest positive and negative sat at cosines 0.60 and 0.47, and 40 x 0.13 = 5.4 logits made it 0.86, over
# the threshold. Capped at 4 (0.027 -> 0.60): on the development sets (scratch emulation, session 14) recall at a
# 3% hard-negative rate moved by less than a point (injection 93.8% -> 94.0%, self-harm 93.1% -> 93.0%).
MAX_SHIFT = 4.0


def _unit(x: npt.NDArray[np.floating]) -> F32:
    x32 = np.asarray(x, np.float32)
    out: F32 = x32 / np.maximum(np.linalg.norm(x32, axis=-1, keepdims=True), np.float32(1e-12))
    return out


def _pack(a: npt.NDArray[np.floating]) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f2").tobytes()).decode("ascii")


def _unpack(text: str, shape: tuple[int, int]) -> F32:
    raw = np.frombuffer(base64.b64decode(text.encode("ascii"), validate=True), dtype="<f2")
    if raw.size != shape[0] * shape[1]:
        raise ValueError(f"memory: {raw.size} values, expected {shape[0]} x {shape[1]}")
    return raw.reshape(shape).astype(np.float32)


def logit(p: npt.NDArray[np.floating]) -> F64:
    q = np.clip(np.asarray(p, np.float64), 1e-9, 1 - 1e-9)
    out: F64 = np.log(q / (1 - q))
    return out


@dataclass(frozen=True, slots=True)
class ExemplarMemory:
    """basis [F, r] (head features -> memory space), rows [n, r] unit vectors, row_category [n]: the category
    index of a positive row, NEGATIVE for a negative one; beta: the margin's weight in logit space; max_shift: the
    most it moves a score, in logits."""

    basis: F32
    rows: F32
    row_category: npt.NDArray[np.int64]
    n_categories: int
    beta: float
    max_shift: float = MAX_SHIFT
    # [start, end) of each category's positives, then of the negatives, in the rows: margins() runs per window, and
    # a slice's maximum costs ~5 us where gathering 23,000 rows by index cost ~45 (and boolean masks more)
    _groups: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        missing = [c for c in range(self.n_categories) if not (self.row_category == c).any()]
        if missing or not (self.row_category == NEGATIVE).any():
            raise ValueError(f"memory: every category needs a positive row and there must be negatives "
                             f"(categories without: {missing})")
        # rows kept grouped, positives by category then the negatives: a margin is a maximum over each group, so the
        # order within the memory means nothing else
        key = np.where(self.row_category == NEGATIVE, self.n_categories, self.row_category)
        order = np.argsort(key, kind="stable")
        object.__setattr__(self, "rows", np.ascontiguousarray(self.rows[order]))
        object.__setattr__(self, "row_category", self.row_category[order])
        ends = np.cumsum(np.bincount(key, minlength=self.n_categories + 1))
        object.__setattr__(self, "_groups", tuple(zip((0, *ends[:-1].tolist()), ends.tolist(), strict=True)))

    @classmethod
    def fit(cls, x: F64, labels: npt.NDArray[np.int64], n_categories: int, basis: F64, beta: float,
            max_shift: float = MAX_SHIFT) -> ExemplarMemory:
        """x [n, F] head features (unit rows), labels [n] category index + 1 (0 for a negative), basis [F, r]."""
        b = np.asarray(basis, np.float32)
        rows = _unit(np.asarray(x, np.float32) @ b)
        cats = np.asarray(labels, np.int64) - 1
        cats[cats < 0] = NEGATIVE
        # round-tripped through float16 now, so that the fitted memory scores as the loaded one will
        return cls(b.astype("<f2").astype(np.float32), rows.astype("<f2").astype(np.float32), cats,
                   n_categories, float(beta), float(max_shift))

    def margins(self, x: npt.NDArray[np.floating]) -> F64:
        """[N, F] head features -> [N, C]: per category, the cosine with the nearest positive row of that
        category minus the cosine with the nearest negative row."""
        # one matrix-vector product per window: for two windows or more OpenBLAS's matrix product packs the whole
        # table (~15 MB at 28,886 rows of rank 128) on every call, 1.5 ms for two windows against ~0.25 ms each
        sims = np.stack([self.rows @ v for v in _unit(np.asarray(x, np.float32) @ self.basis)])
        nearest = np.stack([sims[:, a:b].max(axis=1) for a, b in self._groups], axis=1).astype(np.float64)
        out: F64 = nearest[:, :-1] - nearest[:, -1:]
        return out

    def adjust(self, scores: npt.NDArray[np.floating], x: npt.NDArray[np.floating]) -> F64:
        """The heads' [N, C] scores of rows with head features x [N, F], moved by the memory's margins."""
        return self.shifted(scores, np.clip(self.beta * self.margins(x), -self.max_shift, self.max_shift))

    def reach(self, scores: npt.NDArray[np.floating]) -> tuple[F64, F64]:
        """The lowest and the highest score `adjust` can make of the heads' [N, C] `scores`, whatever the window's
        neighbours: the margin's shift is capped at max_shift logits either way."""
        return self.shifted(scores, -self.max_shift), self.shifted(scores, self.max_shift)

    @staticmethod
    def shifted(scores: npt.NDArray[np.floating], shift: npt.NDArray[np.floating] | float) -> F64:
        out: F64 = 1.0 / (1.0 + np.exp(-(logit(scores) + shift)))
        return out

    def to_json(self) -> dict[str, object]:
        return {"rank": int(self.basis.shape[1]), "width": int(self.basis.shape[0]), "beta": self.beta,
                "max_shift": self.max_shift,
                "n_categories": self.n_categories, "row_category": [int(c) for c in self.row_category],
                "basis_f16": _pack(self.basis), "rows_f16": _pack(self.rows)}

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> ExemplarMemory:
        rank, width, n_cat, beta, cap = obj["rank"], obj["width"], obj["n_categories"], obj["beta"], obj["max_shift"]
        cats, basis, rows = obj["row_category"], obj["basis_f16"], obj["rows_f16"]
        if not (isinstance(rank, int) and isinstance(width, int) and isinstance(n_cat, int)
                and isinstance(beta, (int, float)) and isinstance(cap, (int, float)) and cap >= 0
                and isinstance(cats, list) and isinstance(basis, str)
                and isinstance(rows, str)):
            raise ValueError("memory: malformed fields")
        row_category = np.asarray(cats, dtype=np.int64)
        if row_category.ndim != 1 or not ((row_category >= NEGATIVE) & (row_category < n_cat)).all():
            raise ValueError("memory: row categories out of range")
        return cls(_unpack(basis, (width, rank)), _unpack(rows, (len(row_category), rank)), row_category, n_cat,
                   float(beta), float(cap))


__all__ = ["BETA", "MAX_SHIFT", "NEGATIVE", "RANK", "ExemplarMemory", "logit"]
