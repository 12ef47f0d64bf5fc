"""The loaded model: the tokenizer and the encoder's two sessions (the second stage).

One `Runtime` per process is enough: the tokenizer and numpy parts are pure, and an onnxruntime
`InferenceSession.run` is thread-safe, so detectors in several worker threads share it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from models import build
from models.export import EXIT_LAYER, POOL_LAYERS
from models.lru import Lru
from models.tokenizer import Tokenizer

F32 = npt.NDArray[np.float32]
QUERY_PREFIX = "query: "  # e5's prefix for symmetric tasks such as classification
# second-stage window, specials included. Attention stays local to a window, so a 512-token text costs eight
# runs, linear in length: 45.5 ms per 512 tokens as 8 x 64 against 46.7 ms as 4 x 128 (one core, 6 layers).
# Short windows keep one harmful sentence from being averaged away by benign neighbours: inside 20 benign
# sentences, "谁能帮我去考四六级..." scored 0.10 in its 120-token window, 0.64 in its 56-token window.
MAX_TOKENS = 64
# Windows whose encoder outputs are kept for the next head set judging the same text (Runtime.early/late): the
# longest text the proxy judges whole is a few dozen windows.
EARLY_CACHE = 64
LATE_CACHE = 256
OUTPUTS = ["embedding", *(f"pool{i}" for i in POOL_LAYERS)]
FEATURES = 384 * len(OUTPUTS)
EARLY_POOLS = [f"pool{i}" for i in POOL_LAYERS if i <= EXIT_LAYER]
LATE_OUTPUTS = ["embedding", *(f"pool{i}" for i in POOL_LAYERS if i > EXIT_LAYER)]
# the early-exit head's input: the mean after EXIT_LAYER layers, a column range of the full features
EARLY_COLUMNS = slice(384 * OUTPUTS.index(f"pool{EXIT_LAYER}"), 384 * (OUTPUTS.index(f"pool{EXIT_LAYER}") + 1))


@dataclass(frozen=True, slots=True)
class Early:
    """A window after the early-exit graph: its pooled states (the exit head's input) and what the late
    graph needs to finish it."""

    pools: dict[str, F32]  # pool<i> [384] for i <= EXIT_LAYER
    hidden: F32  # [1, T, 384]
    mask: npt.NDArray[np.int64]
    key: tuple[int, ...] = field(default=(), compare=False)  # the content ids it was run on (the caches' key)

    @property
    def exit_features(self) -> F32:
        return self.pools[f"pool{EXIT_LAYER}"]


class Runtime:
    """Everything the detector needs at run time, loaded once from a verified cached build."""

    def __init__(self, built: build.Built, *, threads: int = 1) -> None:
        import onnxruntime as ort

        self.built = built
        self.tokenizer = Tokenizer.from_files(built.path(build.TOKENIZER), built.path(build.NORMALIZATION))
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        # basic graph optimizations only: the extended level's SkipLayerNormalization fusion made the late
        # graph 10 ms per 512 tokens slower (export.py); the arena and memory-pattern options changed
        # nothing measurable (within 1-2 ms of 90 ms, one core)
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        self._early = ort.InferenceSession(str(built.path(build.ENCODER_EARLY)), opts,
                                           providers=["CPUExecutionProvider"])
        self._late = ort.InferenceSession(str(built.path(build.ENCODER_LATE)), opts,
                                          providers=["CPUExecutionProvider"])
        self._prefix = self.tokenizer.encode(QUERY_PREFIX.rstrip())
        # Several head sets judge the same windows (the builtin heads, the attack heads, a user's): a window
        # one set has sent through the encoder is not run again for the next. Bounded: an Early holds the
        # hidden states (~100 KB at 64 tokens), full features are 6 KB.
        self._early_cache: Lru[tuple[int, ...], Early] = Lru(EARLY_CACHE)
        self._late_cache: Lru[tuple[int, ...], F32] = Lru(LATE_CACHE)

    # -- second stage -------------------------------------------------------------------------------
    def early(self, ids: Sequence[int]) -> Early:
        """`run_early`, remembered for the last EARLY_CACHE windows."""
        key = tuple(ids)
        out = self._early_cache.get(key)
        if out is None:
            out = self.run_early(key)
            self._early_cache.put(key, out)
        return out

    def late(self, early: Early) -> F32:
        """`run_late`, remembered for the last LATE_CACHE windows (an Early made by `early` carries its key)."""
        out = self._late_cache.get(early.key) if early.key else None
        if out is None:
            out = self.run_late(early)
            if early.key:
                self._late_cache.put(early.key, out)
        return out

    def forget(self) -> None:
        """Empty the encoder output caches and the tokenizer's (benchmarks: every prompt pays full price)."""
        self._early_cache.clear()
        self._late_cache.clear()
        self.tokenizer.forget()

    def cached_late(self, ids: Sequence[int]) -> F32 | None:
        """The full features of a window another head set has already run through the whole encoder."""
        return self._late_cache.get(tuple(ids))

    def run_early(self, ids: Sequence[int]) -> Early:
        """The early-exit graph on one content-id window (prefix and specials added, truncated to
        MAX_TOKENS). Windows run one by one, never batched: the int8 kernels quantize activations with one
        range per run, so a batched window's features would depend on its neighbours (cosine 0.994
        measured); alone, a window scores the same whatever else is judged with it, and needs no padding."""
        tok = self.tokenizer
        seq = [tok.bos, *self._prefix, *ids[: MAX_TOKENS - 2 - len(self._prefix)], tok.eos]
        arr = np.array([seq], dtype=np.int64)
        mask = np.ones_like(arr)
        parts = self._early.run([*EARLY_POOLS, "hidden"], {"input_ids": arr, "attention_mask": mask})
        return Early(dict(zip(EARLY_POOLS, (p[0] for p in parts[:-1]), strict=True)), parts[-1], mask, tuple(ids))

    def run_late(self, early: Early) -> F32:
        """The rest of the encoder: the window's full features [384 * len(OUTPUTS)] (the sentence embedding,
        then the raw intermediate-layer means in POOL_LAYERS order)."""
        parts = self._late.run(LATE_OUTPUTS, {"hidden_in": early.hidden, "attention_mask": early.mask})
        named = {**early.pools, **dict(zip(LATE_OUTPUTS, (p[0] for p in parts), strict=True))}
        return np.concatenate([named[n] for n in OUTPUTS])

    def encode_ids(self, batch: Sequence[Sequence[int]]) -> F32:
        """Full encoder features of content-id windows: [N, FEATURES] (both graphs on every window)."""
        out = np.zeros((len(batch), FEATURES), dtype=np.float32)
        for i, ids in enumerate(batch):
            out[i] = self.run_late(self.run_early(ids))  # not through the caches: training runs thousands
        return out

