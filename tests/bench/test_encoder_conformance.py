"""bench/encoder_conformance.py: the int8 kernels of this host against the numpy reference of the operators."""

from __future__ import annotations

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from bench import encoder_conformance as conformance
from models import build, runtime


def test_the_reference_operator_is_the_matmul_up_to_quantization() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(size=(3, 16)).astype(np.float32)
    w = rng.integers(-127, 128, size=(16, 5)).astype(np.int8)
    scale = np.full(5, 0.01, np.float32)
    op = conformance.DynamicQuantizeMatMul.__new__(conformance.DynamicQuantizeMatMul)
    got = op._run(a, w, scale)[0]
    exact = a.astype(np.float64) @ (w.astype(np.float64) * 0.01)
    step = (a.max() - min(0.0, a.min())) / 255  # one activation quantum, times the weights' column sums at most
    assert np.abs(got - exact).max() <= step * np.abs(w * 0.01).sum(0).max()


def test_this_hosts_int8_kernels_compute_the_operator_as_defined(built: build.Built, rt: runtime.Runtime) -> None:
    # each DynamicQuantizeMatMul node run alone on the reference's input for it (the end-to-end difference is
    # rounding noise carried on, host-dependent: not asserted)
    model = onnx.load(str(built.path(build.ENCODER_EARLY)))
    reference = ReferenceEvaluator(model, new_ops=[conformance.DynamicQuantizeMatMul, conformance.Gelu])
    ids = rt.tokenizer.encode(conformance.TEXTS[1])
    seq = np.array([[rt.tokenizer.bos, *rt._prefix, *ids, rt.tokenizer.eos]], dtype=np.int64)
    feeds = {"input_ids": seq, "attention_mask": np.ones_like(seq)}
    assert conformance.kernel_difference(model, reference, feeds) < 1e-5



def test_the_nudged_runtime_moves_only_the_late_graphs_input(built: build.Built, rt: runtime.Runtime) -> None:
    ids = rt.tokenizer.encode(conformance.TEXTS[0])
    served = rt.run_late(rt.run_early(ids))
    still, nudged = conformance.NudgedRuntime(built, 0.0), conformance.NudgedRuntime(built, 1e-2)
    assert np.array_equal(still.run_late(still.run_early(ids)), served)
    moved = nudged.run_late(nudged.run_early(ids))
    assert not np.array_equal(moved, served) and float(np.dot(moved, served)) > 0.9 * float(np.dot(served, served))
