"""LoRA provenance: which adapter answered, on which base model, with which weights (DESIGN section 6).

The adapter is the request's `model` when it names an adapter. The base model and the adapter's path come
from the upstream's `/v1/models` (vLLM lists adapters with `parent` = base model and `root` = the path it
loaded) or from configuration (`lora_adapters: [name=path]`, `base_model`). The weight checksum is SHA-256
over the adapter's files, computed in a worker thread (never on the event loop) and cached per file by path,
size and mtime, so a periodic re-check costs a directory walk of `stat` calls. Checksums are computed only
for directories inside the configured `lora_dir`: a path named by the upstream is never read outside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from proxy.config import WardenConfig
from proxy.exceptions import ProxyError
from proxy.httpget import ProbeError, http_get
from proxy.state import record_name

log = logging.getLogger("warden.lora")

REFRESH_SECONDS = 30.0  # /v1/models re-read and checksums re-validated this often
UNKNOWN_REFRESH_SECONDS = 5.0  # an unknown model name triggers a re-read at most this often
CHECKSUM_WAIT_SECONDS = 2.0  # a request for an adapter whose checksum is being computed waits at most this

# `owned_by` in /v1/models -> gen_ai.provider.name
_OWNERS = {"vllm": "vllm", "sglang": "sglang", "llamacpp": "llama_cpp", "llama.cpp": "llama_cpp",
           "tgi": "tgi", "text-generation-inference": "tgi", "triton": "triton", "openai": "openai"}

Fetch = Callable[[str], Awaitable[tuple[int, bytes]]]


class LoraError(ProxyError, ValueError):
    """An adapter directory cannot be checksummed; the message names the path and the reason."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One model the upstream serves. For an adapter, `base_model` is its parent and `path` its weights."""

    name: str
    base_model: str | None
    adapter: bool
    path: str | None = None
    weights_sha256: str | None = None


class FileDigests:
    """SHA-256 of files, cached by (path, size, mtime_ns): unchanged files are never read twice."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, int, str]] = {}
        self._lock = threading.Lock()

    def digest(self, path: str, stat: os.stat_result) -> str:
        key = (stat.st_size, stat.st_mtime_ns)
        with self._lock:
            hit = self._cache.get(path)
        if hit is not None and hit[:2] == key:
            return hit[2]
        with open(path, "rb") as fh:
            value = hashlib.file_digest(fh, "sha256").hexdigest()
        with self._lock:
            self._cache[path] = (*key, value)
        return value


def adapter_weights_sha256(directory: str | Path, digests: FileDigests | None = None) -> str:
    """SHA-256 over the manifest `<sha256 of file>  <relative path>\\n` of every regular file under
    `directory` (symlinks followed), sorted by path bytes. The same figure from coreutils:

        (cd DIR && find -L . -type f -printf '%P\\n' | LC_ALL=C sort | xargs -d '\\n' sha256sum) | sha256sum
    """
    root = Path(directory)
    if not root.is_dir():
        raise LoraError(f"{root}: not a directory")
    digests = digests or FileDigests()
    entries: list[tuple[bytes, str, os.stat_result]] = []
    for dirpath, _dirs, files in os.walk(root, followlinks=True):
        for name in files:
            full = os.path.join(dirpath, name)
            try:
                stat = os.stat(full)
            except OSError:
                continue  # a dangling link is not a weight file
            if not os.path.isfile(full):
                continue
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            entries.append((os.fsencode(rel), full, stat))
    if not entries:
        raise LoraError(f"{root}: no files")
    entries.sort(key=lambda e: e[0])
    manifest = hashlib.sha256()
    for rel_bytes, full, stat in entries:
        manifest.update(digests.digest(full, stat).encode() + b"  " + rel_bytes + b"\n")
    return manifest.hexdigest()


def parse_adapters(entries: tuple[str, ...]) -> dict[str, str]:
    """`name=path` configuration entries -> {name: path}."""
    out: dict[str, str] = {}
    for entry in entries:
        name, sep, path = entry.partition("=")
        if not sep or not name.strip() or not path.strip():
            raise LoraError(f"lora_adapters entry {entry!r} is not name=path")
        out[name.strip()] = path.strip()
    return out


def parse_models(payload: bytes) -> tuple[dict[str, ModelInfo], str | None]:
    """An OpenAI `/v1/models` answer -> models by name, and the provider its `owned_by` names (if known)."""
    doc = json.loads(payload)
    data = doc.get("data") if isinstance(doc, dict) else None
    models: dict[str, ModelInfo] = {}
    provider: str | None = None
    for item in data if isinstance(data, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            continue
        # Names as requests' model names are recorded (proxy/state.py record_name), so that they match.
        name, parent, root = record_name(item["id"]) or "", record_name(item.get("parent")), item.get("root")
        owner = str(item.get("owned_by", "")).lower()
        provider = provider or _OWNERS.get(owner)
        if isinstance(parent, str) and parent:
            models[name] = ModelInfo(name, parent, True, root if isinstance(root, str) else None)
        else:
            base = (record_name(root) or name) if isinstance(root, str) and root and not root.startswith("/") else name
            models[name] = ModelInfo(name, base, False)
    return models, provider


class LoraRegistry:
    """What the upstream serves, refreshed in the background; `lookup` never blocks and never does I/O."""

    def __init__(
        self,
        upstream: str,
        *,
        lora_dir: str | None = None,
        adapters: Mapping[str, str] | None = None,
        base_model: str | None = None,
        fetch: Fetch | None = None,
        verify_tls: bool | str = True,
        clock: Callable[[], float] = time.monotonic,
        refresh_seconds: float = REFRESH_SECONDS,
    ) -> None:
        self.models_url = upstream.rstrip("/") + "/v1/models"
        self.lora_dir = Path(lora_dir).resolve() if lora_dir else None
        self.base_model = base_model
        self.provider: str | None = None  # detected from /v1/models `owned_by`
        self._fetch = fetch or (lambda url: http_get(url, 2.0, verify_tls=verify_tls))
        self._clock = clock
        self._refresh_seconds = refresh_seconds
        self._digests = FileDigests()
        self._configured = {
            name: ModelInfo(name, base_model, True, path) for name, path in (adapters or {}).items()
        }
        self._models: dict[str, ModelInfo] = dict(self._configured)
        self._hashing: dict[str, asyncio.Future[str | None]] = {}
        self._last_refresh = -1e18
        self._loaded = False
        self._refreshing: asyncio.Task[None] | None = None
        self._loop_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[str | None]] = set()  # strong references while they run

    @classmethod
    def from_config(cls, config: WardenConfig) -> LoraRegistry:
        """The registry `warden serve` runs (built by proxy/serve.py `build_services`): configured adapters and
        base model, the rest from the upstream's `/v1/models`. Raises LoraError for a `lora_adapters` entry that
        is not name=path. Built inside the running loop, it reads the models at once (else at the first lookup)."""
        registry = cls(config.upstream, lora_dir=config.lora_dir, adapters=parse_adapters(config.lora_adapters),
                       base_model=config.base_model, verify_tls=config.upstream_verify)
        with contextlib.suppress(RuntimeError):  # no running loop: started by the first lookup instead
            registry.start()
        return registry

    # -- request path (sync, O(1)) ------------------------------------------------------------------------

    def lookup(self, model: str | None) -> ModelInfo | None:
        """What is known about `model` now; an unknown name schedules a (rate-limited) refresh."""
        if not model:
            return None
        self._ensure_started()
        info = self._models.get(model)
        if info is None and self._clock() - self._last_refresh > UNKNOWN_REFRESH_SECONDS:
            self.schedule_refresh()
        if info is None and self.base_model and model == self.base_model:
            return ModelInfo(model, model, False)
        return info

    def pending_checksum(self, name: str) -> asyncio.Future[str | None] | None:
        """The checksum computation in flight for this adapter, if any (to await with a bound)."""
        future = self._hashing.get(name)
        return future if future is not None and not future.done() else None

    # -- background ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Start the first read and the periodic refresh (idempotent; needs a running event loop)."""
        if self._loop_task is None:
            loop = asyncio.get_running_loop()
            self._refreshing = loop.create_task(self.refresh(), name="warden-lora-first")
            self._loop_task = loop.create_task(self._periodic(), name="warden-lora")

    def warming(self) -> asyncio.Task[None] | None:
        """The first read of the upstream's models while it is still running (requests may wait for it)."""
        task = self._refreshing
        return task if not self._loaded and task is not None and not task.done() else None

    def _ensure_started(self) -> None:
        if self._loop_task is None:
            with contextlib.suppress(RuntimeError):  # no running loop: a synchronous caller (tests)
                self.start()

    async def _periodic(self) -> None:
        while True:
            await asyncio.sleep(self._refresh_seconds)
            try:
                await self.refresh()
            except Exception:
                log.exception("adapter refresh failed")

    def schedule_refresh(self) -> None:
        if self._refreshing is None or self._refreshing.done():
            with contextlib.suppress(RuntimeError):
                self._refreshing = asyncio.get_running_loop().create_task(self.refresh())

    async def refresh(self) -> None:
        """Re-read /v1/models and (re)compute adapter checksums; keeps the old view when the upstream fails."""
        self._last_refresh = self._clock()
        try:
            status, payload = await self._fetch(self.models_url)
            if status == 200:
                models, provider = parse_models(payload)
                self.provider = provider or self.provider
                merged = {**models}
                for name, info in self._configured.items():  # configuration fills what the upstream omits
                    seen = merged.get(name)
                    merged[name] = info if seen is None else replace(
                        seen, base_model=seen.base_model or info.base_model, path=info.path or seen.path
                    )
                for name, info in self._models.items():  # keep known checksums while the paths match
                    if name in merged and merged[name].path == info.path:
                        merged[name] = replace(merged[name], weights_sha256=info.weights_sha256)
                self._models = merged
        except (ProbeError, ValueError, RecursionError) as exc:
            log.debug("cannot read the upstream's models", extra={"url": self.models_url, "error": str(exc)})
        try:
            await asyncio.gather(*(self.checksum(name) for name, m in list(self._models.items()) if m.adapter))
        finally:
            self._loaded = True

    def adapter_dir(self, info: ModelInfo) -> Path | None:
        """The adapter's weights directory, only inside `lora_dir`: the path itself, or `lora_dir/<name>`,
        or `lora_dir/<last part of the path>`."""
        if self.lora_dir is None:
            return None
        candidates: list[Path] = []
        if info.path:
            path = Path(info.path)
            candidates.append(path if path.is_absolute() else self.lora_dir / path)
            candidates.append(self.lora_dir / path.name)
        candidates.append(self.lora_dir / info.name)
        for candidate in candidates:
            resolved = candidate.resolve()
            if resolved.is_relative_to(self.lora_dir) and resolved.is_dir():
                return resolved
        return None

    async def checksum(self, name: str) -> str | None:
        """Compute (or re-validate) one adapter's weight checksum in a worker thread; shared by concurrent
        callers."""
        info = self._models.get(name)
        if info is None:
            return None
        directory = self.adapter_dir(info)
        if directory is None:
            return None
        running = self.pending_checksum(name)
        if running is not None:
            return await running
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._hashing[name] = future
        try:
            value: str | None = await asyncio.to_thread(adapter_weights_sha256, directory, self._digests)
        except (LoraError, OSError) as exc:
            log.warning("cannot checksum adapter weights", extra={"adapter": name, "error": str(exc)})
            value = None
        finally:
            self._hashing.pop(name, None)
        current = self._models.get(name)
        if current is not None and current.path == info.path:
            self._models[name] = replace(current, weights_sha256=value)
        future.set_result(value)
        return value

    def add_adapter(self, name: str, path: str | None) -> asyncio.Task[str | None] | None:
        """An adapter loaded through the admin route: known at once, checksummed in the background (the task
        is returned so the caller may wait for it, bounded)."""
        info = ModelInfo(name, self.base_model, True, path)
        self._configured[name] = self._models[name] = info  # kept until unloaded, listed or not
        self.schedule_refresh()
        try:
            task = asyncio.get_running_loop().create_task(self.checksum(name))
        except RuntimeError:
            return None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def remove_adapter(self, name: str) -> None:
        self._models.pop(name, None)
        self._configured.pop(name, None)
