from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from proxy.lora import (
    FileDigests,
    LoraError,
    LoraRegistry,
    adapter_weights_sha256,
    parse_adapters,
    parse_models,
)

MODELS = json.dumps({"object": "list", "data": [
    {"id": "base-7b", "object": "model", "owned_by": "vllm", "root": "meta/base-7b", "parent": None},
    {"id": "sql-lora", "object": "model", "owned_by": "vllm", "root": "/adapters/sql-lora", "parent": "base-7b"},
]}).encode()


def make_adapter(root: Path, name: str = "sql-lora") -> Path:
    adapter = root / name
    (adapter / "sub").mkdir(parents=True)
    (adapter / "adapter_config.json").write_text('{"r": 8}')
    (adapter / "adapter_model.safetensors").write_bytes(bytes(range(256)) * 64)
    (adapter / "sub" / "tokenizer.json").write_text("{}")
    return adapter


@pytest.mark.skipif(shutil.which("sha256sum") is None or shutil.which("find") is None, reason="needs coreutils")
def test_checksum_matches_the_documented_coreutils_command(tmp_path: Path) -> None:
    adapter = make_adapter(tmp_path)
    command = ("(cd \"$DIR\" && find -L . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum)"
               " | sha256sum")
    out = subprocess.run(["bash", "-c", command], env={**os.environ, "DIR": str(adapter)},
                         capture_output=True, text=True, check=True).stdout.split()[0]
    assert adapter_weights_sha256(adapter) == out


def test_checksum_changes_with_content_and_names_and_follows_links(tmp_path: Path) -> None:
    adapter = make_adapter(tmp_path)
    first = adapter_weights_sha256(adapter)
    (adapter / "adapter_config.json").write_text('{"r": 16}')
    second = adapter_weights_sha256(adapter)
    assert second != first
    (adapter / "adapter_config.json").rename(adapter / "config.json")
    assert adapter_weights_sha256(adapter) != second
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "adapter_model.safetensors").symlink_to(adapter / "adapter_model.safetensors")
    assert adapter_weights_sha256(linked)  # a Hugging Face snapshot is all symlinks


def test_file_digests_are_cached_by_size_and_mtime(tmp_path: Path) -> None:
    adapter = make_adapter(tmp_path)
    digests = FileDigests()
    value = adapter_weights_sha256(adapter, digests)
    weights = adapter / "adapter_model.safetensors"
    stat = weights.stat()
    # Same size and mtime: the cache answers without reading (so a re-check is only a walk of stat calls).
    weights.write_bytes(b"X" * stat.st_size)
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert adapter_weights_sha256(adapter, digests) == value
    os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert adapter_weights_sha256(adapter, digests) != value


def test_checksum_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(LoraError, match="not a directory"):
        adapter_weights_sha256(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoraError, match="no files"):
        adapter_weights_sha256(tmp_path / "empty")


def test_parse_models_reads_parent_root_and_provider() -> None:
    models, provider = parse_models(MODELS)
    assert provider == "vllm"
    assert models["sql-lora"].adapter and models["sql-lora"].base_model == "base-7b"
    assert models["sql-lora"].path == "/adapters/sql-lora"
    assert not models["base-7b"].adapter and models["base-7b"].base_model == "meta/base-7b"
    assert parse_models(b'{"data": [{"id": "x", "owned_by": "llamacpp"}]}')[1] == "llama_cpp"


def test_parse_adapters() -> None:
    assert parse_adapters(("a=/w/a", " b = rel/b ")) == {"a": "/w/a", "b": "rel/b"}
    with pytest.raises(LoraError, match="name=path"):
        parse_adapters(("nopath",))


def fetcher(payload: bytes, calls: list[str] | None = None):  # type: ignore[no-untyped-def]
    async def fetch(url: str) -> tuple[int, bytes]:
        if calls is not None:
            calls.append(url)
        return 200, payload
    return fetch


def test_registry_maps_the_upstream_path_into_lora_dir_and_checksums(tmp_path: Path) -> None:
    adapter = make_adapter(tmp_path)

    async def main() -> None:
        registry = LoraRegistry("http://up:8000", lora_dir=str(tmp_path), fetch=fetcher(MODELS))
        await registry.refresh()
        info = registry.lookup("sql-lora")
        assert info is not None and info.adapter
        assert info.weights_sha256 == adapter_weights_sha256(adapter)  # /adapters/sql-lora -> lora_dir/sql-lora
        assert registry.provider == "vllm"
        base = registry.lookup("base-7b")
        assert base is not None and not base.adapter

    asyncio.run(main())


def test_registry_never_reads_outside_lora_dir(tmp_path: Path) -> None:
    outside = make_adapter(tmp_path / "outside", "secret")
    (tmp_path / "weights").mkdir()
    payload = json.dumps({"data": [{"id": "evil", "parent": "b", "root": str(outside)},
                                   {"id": "dots", "parent": "b", "root": "../outside/secret"}]}).encode()

    async def main() -> None:
        registry = LoraRegistry("http://up", lora_dir=str(tmp_path / "weights"), fetch=fetcher(payload))
        await registry.refresh()
        for name in ("evil", "dots"):
            info = registry.lookup(name)
            assert info is not None and info.adapter and info.weights_sha256 is None

    asyncio.run(main())


def test_configured_adapters_and_base_model_fill_what_the_upstream_omits(tmp_path: Path) -> None:
    adapter = make_adapter(tmp_path, "mine")

    async def main() -> None:
        async def down(url: str) -> tuple[int, bytes]:
            return 404, b""

        registry = LoraRegistry("http://up", lora_dir=str(tmp_path), adapters={"mine": "mine"},
                                base_model="base", fetch=down)
        await registry.refresh()
        info = registry.lookup("mine")
        assert info is not None and info.base_model == "base"
        assert info.weights_sha256 == adapter_weights_sha256(adapter)
        base = registry.lookup("base")
        assert base is not None and not base.adapter
        assert registry.lookup("unknown") is None

    asyncio.run(main())


def test_unknown_models_refresh_at_a_bounded_rate() -> None:
    calls: list[str] = []
    now = [100.0]

    async def main() -> None:
        registry = LoraRegistry("http://up", fetch=fetcher(MODELS, calls), clock=lambda: now[0])
        await registry.refresh()
        registry._loop_task = asyncio.get_running_loop().create_future()  # type: ignore[assignment]  # no periodic task
        for _ in range(10):
            registry.lookup("nope")
            await asyncio.sleep(0)
        assert len(calls) == 1
        now[0] += 60
        registry.lookup("nope")
        await asyncio.sleep(0.01)
        assert len(calls) == 2

    asyncio.run(main())


def test_an_adapter_loaded_through_the_admin_route_is_known_and_checksummed(tmp_path: Path) -> None:
    adapter = make_adapter(tmp_path, "new")

    async def main() -> None:
        registry = LoraRegistry("http://up", lora_dir=str(tmp_path), fetch=fetcher(b'{"data": []}'))
        task = registry.add_adapter("new", str(adapter))
        assert task is not None
        assert await task == adapter_weights_sha256(adapter)
        info = registry.lookup("new")
        assert info is not None and info.weights_sha256 == await task
        registry.remove_adapter("new")
        assert registry._models.get("new") is None

    asyncio.run(main())
