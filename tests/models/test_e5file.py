from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from models import e5file
from models.errors import ModelFileError


def test_reads_the_pinned_file() -> None:
    f = e5file.read(e5file.default_source())
    assert f.sha256 == e5file.PINNED_SHA256
    assert (f.hidden, f.layers, f.heads, f.ffn, f.max_positions) == (384, 12, 12, 1536, 512)
    assert len(f.pieces) == 250002 and f.pieces[:4] == ("<s>", "<pad>", "</s>", "<unk>")
    assert f.q4["l0.q.w"].dequantize().shape == (384, 384)
    assert f.q4["emb.word"].rows >= len(f.pieces)
    # Q4_0 values are nibble - 8: within [-8, 7]
    vals = f.q4["l3.fi.w"].values()
    assert vals.min() >= -8 and vals.max() <= 7
    assert np.isfinite(f.f32["emb.pos"]).all()


def test_refuses_other_bytes(tmp_path: Path) -> None:
    src = e5file.default_source()
    copy = tmp_path / "e5.bin"
    data = bytearray(src.read_bytes()[:4096])
    copy.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="expected 1571fc98"):
        e5file.read(copy)
    with pytest.raises(ModelFileError, match="truncated"):
        e5file.read(copy, expected_sha256=None)
    copy.write_bytes(b"XXXX" + bytes(data[4:]))
    with pytest.raises(ModelFileError, match="magic"):
        e5file.read(copy, expected_sha256=None)
