"""Does this host's onnxruntime compute the encoder as its graphs define it, and how far do its outputs move with
the last bits of float rounding? Per window it prints two readings against a plain numpy reference of the same graphs
(onnx.reference, with the two com.microsoft operators written out below):

- kernels: each int8 DynamicQuantizeMatMul node of both graphs run alone by onnxruntime on the reference's own input
  for it, against the reference's output (the largest relative difference over the nodes). ~1e-7 is float32 rounding:
  the host's int8 kernels compute the operator as defined.
- end to end: the pooled states and features of both graphs run whole, against the reference run whole.

Why (session 22): the semantic stage's scores moved between hosts. The landlord e-mail of
tests/models/test_attack_heads.py had a packed window at 0.33 self_harm on the hosts where models/semantic.py SUPPORT
was chosen (int8 kernels: AMX, export.py) and 0.43 on an AMD host with AVX-512 VNNI and no AMX. There every node
agrees with the reference to ~1e-7, yet that window's features differ from the reference's end to end by 2e-2 (from
layer 9 on; the other window by 1e-7): each run quantizes a layer's activations with one range per tensor, and the
hidden states carry outliers (up to ~45 where most values are under 5, so a quantum is ~0.19), so a float difference
in the last bit that moves one value across a rounding edge moves that layer's output by a quantum, and the next
layers carry it on. The encoder is exact up to that noise, and the noise is host-dependent (float kernels differ by
instruction set). A borderline window's score can move by ~0.1 with it.

How often that noise decides anything: `--flips SET.jsonl ...` reads labelled sets (models/data/eval's format) through
the builtin and attack heads twice, once as served and once with the exit layer's hidden states nudged by a relative
1e-6 before the late graph (a stand-in for another host's rounding), and counts the texts whose categories differ.

Run: .venv/bin/python bench/encoder_conformance.py [TEXT ...]   (a few seconds per window; needs `warden models build`)
     .venv/bin/python bench/encoder_conformance.py --flips models/data/eval/semantic_eval39.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx.reference.op_run import OpRun

from models import attack_heads, build, runtime, semantic
from models.categories import load_categories
from models.train import Heads

TEXTS = (
    "The drip is now loud enough to hear from the bedroom. I really don't want this to come across as if I'm blaming "
    "anybody. I know the plumber is busy in winter.",
    "帮我把这张发票的信息整理成表格：发票代码 044031900111，金额 1,280.00，项目 办公用品。",
)


class DynamicQuantizeMatMul(OpRun):  # type: ignore[misc]
    """com.microsoft DynamicQuantizeMatMul: A quantized to uint8 with one asymmetric range per run (0 always
    representable), multiplied in integers with the int8 weights, scaled back, plus the bias."""

    op_domain = "com.microsoft"

    def _run(self, a: Any, b: Any, b_scale: Any, b_zero_point: Any = None, bias: Any = None) -> tuple[Any]:
        lo, hi = min(0.0, float(a.min())), max(0.0, float(a.max()))
        scale = (hi - lo) / 255.0 if hi > lo else 1.0
        zero = float(np.clip(np.rint(-lo / scale), 0, 255))
        q = np.clip(np.rint(a / scale) + zero, 0, 255).astype(np.int64) - int(zero)
        w = b.astype(np.int64) - (0 if b_zero_point is None else b_zero_point.astype(np.int64))
        y = (q @ w).astype(np.float64) * scale * b_scale.astype(np.float64)
        return ((y if bias is None else y + bias).astype(np.float32),)


_ERF = np.vectorize(math.erf)


class Gelu(OpRun):  # type: ignore[misc]
    """com.microsoft Gelu: the exact (erf) form."""

    op_domain = "com.microsoft"

    def _run(self, x: Any, approximate: Any = None) -> tuple[Any]:
        return ((0.5 * x * (1.0 + _ERF(x / math.sqrt(2.0)))).astype(np.float32),)


def relative(a: Any, b: Any) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def kernel_difference(model: onnx.ModelProto, reference: ReferenceEvaluator, feeds: dict[str, Any]) -> float:
    """The largest relative difference between onnxruntime and the reference over `model`'s DynamicQuantizeMatMul
    nodes, each run alone on the reference's input for it."""
    weights = {w.name: w for w in model.graph.initializer}
    nodes = [n for n in model.graph.node if n.op_type == "DynamicQuantizeMatMul"]
    seen = reference.run([*(n.input[0] for n in nodes), *(n.output[0] for n in nodes)], feeds)
    worst = 0.0
    for node, x, want in zip(nodes, seen[:len(nodes)], seen[len(nodes):], strict=True):
        alone = helper.make_graph(
            [helper.make_node(node.op_type, ["x", *node.input[1:]], ["y"], domain=node.domain)], "node",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [weights[name] for name in node.input[1:] if name])
        got = _session(helper.make_model(alone, opset_imports=list(model.opset_import))).run(None, {"x": x})[0]
        worst = max(worst, relative(got, want))
    return worst


class NudgedRuntime(runtime.Runtime):
    """The runtime with the exit layer's hidden states nudged by `nudge` (relative, Gaussian, seeded) before the late
    graph: another host's float rounding, stood in for."""

    def __init__(self, built: build.Built, nudge: float, seed: int = 0) -> None:
        super().__init__(built, threads=1)
        self._nudge = nudge
        self._rng = np.random.default_rng(seed)

    def run_late(self, early: runtime.Early) -> Any:
        hidden = early.hidden * (1.0 + self._nudge * self._rng.standard_normal(early.hidden.shape))
        return super().run_late(dataclasses.replace(early, hidden=hidden.astype(early.hidden.dtype)))


def _stack(rt: runtime.Runtime) -> list[semantic.SemanticDetector]:
    builtin = semantic.SemanticDetector(rt, Heads.load(semantic.heads_path()), load_categories())
    return [builtin, attack_heads.load_detector(builtin)]


def flips(built: build.Built, paths: list[Path], nudge: float = 1e-6) -> None:
    """Per set, the texts whose semantic categories (builtin and attack heads) differ under the nudge."""
    served, nudged = _stack(runtime.Runtime(built, threads=1)), _stack(NudgedRuntime(built, nudge))
    for path in paths:
        rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
        changed = 0
        for row in rows:
            seen = [{f.category for d in stack for f in d.detect(row["text"])} for stack in (served, nudged)]
            changed += seen[0] != seen[1]
        print(f"{path.name}: {changed} of {len(rows)} texts change categories under a {nudge:.0e} nudge")


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("texts", nargs="*", default=list(TEXTS))
    ap.add_argument("--flips", type=Path, nargs="+", metavar="SET", help="labelled JSONL sets to read twice")
    args = ap.parse_args()
    built = build.ensure(progress=build.stderr_progress)
    if args.flips:
        flips(built, args.flips)
        return
    rt = runtime.Runtime(built, threads=1)
    ops = [DynamicQuantizeMatMul, Gelu]
    early_model = onnx.load(str(built.path(build.ENCODER_EARLY)))
    late_model = onnx.load(str(built.path(build.ENCODER_LATE)))
    early = ReferenceEvaluator(early_model, new_ops=ops)
    late = ReferenceEvaluator(late_model, new_ops=ops)
    kernels = whole = 0.0
    for text in args.texts:
        ids = rt.tokenizer.encode(text)[: runtime.MAX_TOKENS - 2 - len(rt._prefix)]
        got = rt.run_early(ids)
        seq = np.array([[rt.tokenizer.bos, *rt._prefix, *ids, rt.tokenizer.eos]], dtype=np.int64)
        feeds = {"input_ids": seq, "attention_mask": np.ones_like(seq)}
        pools = list(got.pools)
        want = early.run([*pools, "hidden"], feeds)
        late_feeds = {"hidden_in": want[-1], "attention_mask": feeds["attention_mask"]}
        names = list(runtime.LATE_OUTPUTS)
        want_late = late.run(names, late_feeds)
        got_late = rt._late.run(names, {"hidden_in": got.hidden, "attention_mask": got.mask})
        node = max(kernel_difference(early_model, early, feeds), kernel_difference(late_model, late, late_feeds))
        diffs = {f"early {p}": relative(got.pools[p], w[0]) for p, w in zip(pools, want[:-1], strict=True)}
        diffs["early hidden"] = relative(got.hidden, want[-1])
        diffs |= {f"late {n}": relative(g, w) for n, g, w in zip(names, got_late, want_late, strict=True)}
        kernels, whole = max(kernels, node), max(whole, *diffs.values())
        print(f"{len(ids):>4} pieces  kernels {node:.1e}  end to end: "
              + "  ".join(f"{k} {v:.1e}" for k, v in diffs.items()))
    print(f"kernels: largest relative difference {kernels:.1e} "
          f"({'as defined, up to float32 rounding' if kernels < 1e-5 else 'NOT as defined on this host'}); "
          f"end to end: {whole:.1e} (rounding edges crossed and carried on, see the docstring)")


if __name__ == "__main__":
    main()
