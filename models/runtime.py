"""The loaded model: tokenizer, static table (first stage) and encoder session (second stage).

One `Runtime` per process is enough: the tokenizer and numpy parts are pure, and an onnxruntime
`InferenceSession.run` is thread-safe, so detectors in several worker threads share it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from models import build
from models.export import POOL_LAYERS
from models.tokenizer import Tokenizer

F32 = npt.NDArray[np.float32]
QUERY_PREFIX = "query: "  # e5's prefix for symmetric tasks such as classification
MAX_TOKENS = 128  # second-stage window, specials included: ~57 ms on one core (512 tokens: ~280 ms)
OUTPUTS = ["embedding", *(f"pool{i}" for i in POOL_LAYERS)]
FEATURES = 384 * len(OUTPUTS)
SIF_A = 1e-3  # smooth inverse frequency: weight a / (a + p(piece)), p from the unigram log-probability


class Runtime:
    """Everything the detector needs at run time, loaded once from a verified cached build."""

    def __init__(self, built: build.Built, *, threads: int = 1) -> None:
        import onnxruntime as ort

        self.built = built
        self.tokenizer = Tokenizer.from_files(built.path(build.TOKENIZER), built.path(build.NORMALIZATION))
        table = np.load(built.path(build.STATIC_TABLE), allow_pickle=False).astype(np.float32)
        index = np.load(built.path(build.STATIC_INDEX), allow_pickle=False)
        scores = np.array([self.tokenizer.score(i) for i in range(len(index))], dtype=np.float64)
        weights = (SIF_A / (SIF_A + np.exp(scores))).astype(np.float32)
        # fold the weights into the rows; row 0 is all zeros for pieces outside the table
        rows = np.zeros((len(table) + 1, table.shape[1]), dtype=np.float32)
        present = index >= 0
        rows[index[present] + 1] = table[index[present]] * weights[present, None]
        self._rows = rows
        self._row_of = np.where(present, index + 1, 0).astype(np.int32)
        self.static_dim = int(table.shape[1])
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        self._session = ort.InferenceSession(str(built.path(build.ENCODER)), opts,
                                             providers=["CPUExecutionProvider"])
        self._prefix = self.tokenizer.encode(QUERY_PREFIX.rstrip())

    # -- first stage --------------------------------------------------------------------------------
    def static_vector(self, ids: Sequence[int] | npt.NDArray[np.int64]) -> F32:
        """Weighted mean of the pieces' distilled vectors, L2-normalized; zeros when no piece is known."""
        rows = self._rows[self._row_of[np.asarray(ids, dtype=np.int64)]]
        v = rows.sum(axis=0)
        n = float(np.linalg.norm(v))
        out: F32 = (v / n if n > 0 else v).astype(np.float32, copy=False)
        return out

    def static_vectors(self, texts: Sequence[str]) -> F32:
        return np.stack([self.static_vector(ids) for ids in self.tokenizer.encode_batch(list(texts))]) \
            if texts else np.zeros((0, self.static_dim), np.float32)

    def coverage(self, ids: Sequence[int]) -> float:
        """Share of the pieces that have a static vector (low for scripts the table does not cover)."""
        if not ids:
            return 1.0
        return float(np.count_nonzero(self._row_of[np.asarray(ids, dtype=np.int64)])) / len(ids)

    # -- second stage -------------------------------------------------------------------------------
    def encode_ids(self, batch: Sequence[Sequence[int]]) -> F32:
        """Encoder features of content-id windows (prefix and specials added, truncated to MAX_TOKENS):
        [N, 384 * (1 + len(POOL_LAYERS))], the sentence embedding then the raw intermediate-layer means."""
        width_out = FEATURES
        if not batch:
            return np.zeros((0, width_out), np.float32)
        tok = self.tokenizer
        seqs = [[tok.bos, *self._prefix, *ids[: MAX_TOKENS - 2 - len(self._prefix)], tok.eos] for ids in batch]
        out = np.zeros((len(seqs), width_out), dtype=np.float32)
        # group by length so padding stays small; one run per group
        order = sorted(range(len(seqs)), key=lambda i: len(seqs[i]))
        for start in range(0, len(order), 16):
            group = order[start : start + 16]
            width = max(len(seqs[i]) for i in group)
            ids_arr = np.full((len(group), width), tok.pad, dtype=np.int64)
            mask = np.zeros((len(group), width), dtype=np.int64)
            for r, i in enumerate(group):
                ids_arr[r, : len(seqs[i])] = seqs[i]
                mask[r, : len(seqs[i])] = 1
            parts = self._session.run(OUTPUTS, {"input_ids": ids_arr, "attention_mask": mask})
            out[group] = np.concatenate(parts, axis=1)
        return out

    def encode(self, texts: Sequence[str]) -> F32:
        return self.encode_ids(self.tokenizer.encode_batch(list(texts)))
