"""A plain numpy forward pass of multilingual-e5-small over the dequantized file: the graph's reference.

Float64 throughout, no activation quantization, exact erf GELU; follows e5.c (positions from 0, mean over
every token including <s> and </s>, then L2 normalization).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from models.e5file import E5File

F64 = npt.NDArray[np.float64]
_erf = np.vectorize(math.erf)


def _ln(x: F64, w: F64, b: F64, eps: float) -> F64:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    out: F64 = (x - mu) / np.sqrt(var + eps) * w + b
    return out


def forward(f: E5File, ids: Sequence[int], *, layers: int | None = None,
            pool_layers: Sequence[int] = ()) -> tuple[F64, dict[int, F64]]:
    h, nh = f.hidden, f.heads
    hd = h // nh
    word = f.q4["emb.word"]
    rows = np.asarray(ids)
    x = (word.values()[rows].astype(np.float64).reshape(len(rows), h // 32, 32)
         * word.scales[rows][:, :, None]).reshape(len(rows), h)
    x = x + f.f32["emb.pos"][: len(rows)] + f.f32["emb.type"][0]
    x = _ln(x, f.f32["emb.ln.w"][0], f.f32["emb.ln.b"][0], f.eps)
    pools: dict[int, F64] = {}
    for i in range(f.layers if layers is None else layers):
        p = f"l{i}."

        def lin(a: F64, name: str, p: str = p) -> F64:
            out: F64 = a @ f.q4[p + name + ".w"].dequantize().astype(np.float64).T + f.f32[p + name + ".b"][0]
            return out

        q, k, v = lin(x, "q"), lin(x, "k"), lin(x, "v")
        ctx = np.zeros_like(x)
        for head in range(nh):
            sl = slice(head * hd, (head + 1) * hd)
            s = q[:, sl] @ k[:, sl].T / math.sqrt(hd)
            s = np.exp(s - s.max(-1, keepdims=True))
            ctx[:, sl] = (s / s.sum(-1, keepdims=True)) @ v[:, sl]
        x = _ln(x + lin(ctx, "ao"), f.f32[p + "aln.w"][0], f.f32[p + "aln.b"][0], f.eps)
        mid = lin(x, "fi")
        mid = 0.5 * mid * (1.0 + _erf(mid / math.sqrt(2.0)))
        x = _ln(x + lin(mid, "fo"), f.f32[p + "oln.w"][0], f.f32[p + "oln.b"][0], f.eps)
        if i + 1 in pool_layers:
            pools[i + 1] = x.mean(0)
    mean = x.mean(0)
    return mean / np.linalg.norm(mean), pools
