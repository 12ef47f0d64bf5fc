"""A fleet's audit logs verified as one: discovery under a directory or an S3 prefix, verification of each log
in parallel, per-log results and one summary.

What a log is. The writer lays one log out as `segments/<first seq>.jsonl` and `checkpoints/<n>.json` under one
root: the log directory (`--audit-dir`), and the same names under the mirror's prefix (`--audit-s3`). So a log
root under a fleet target is:

- in a directory: every directory with a `segments` or a `checkpoints` subdirectory (a log whose files were
  all removed is still found: it verifies as NOTHING_TO_VERIFY, inconclusive);
- in S3: every prefix `P/` with an object, any version or a delete marker (so a hidden log is still found),
  named `P/segments/...` or `P/checkpoints/...`.

Discovery walks the hierarchy one level at a time (S3: ListObjectVersions with Delimiter "/") and never
descends into `segments/` or `checkpoints/`, so it costs one listing per directory, not per object. Logs may
nest; every object belongs to the deepest log root above it, and each log is verified exactly as
`warden audit verify ROOT` would verify it alone. Objects under the target that belong to no log are
reported as stray (a warning: a fleet prefix may hold other things), never verified; a directory that cannot
be listed makes the fleet inconclusive (a log may be there).

Freshness. With `max_age`, a log whose newest checkpoint is older than the bound (or whose unanchored records
waited longer) is STALE: the pod stopped anchoring. A log whose newest checkpoint seals the writer's shutdown
record, with nothing after it, ended cleanly (a pod scaled down) and is never stale.

Parallelism. Verifying is CPU-bound pure Python (a SHA-256 and an HMAC per record, over lines far below the
2 KiB from which hashlib releases the GIL), so the CLI runs logs in worker processes; threads (a library
option) can only overlap I/O such as slow S3 reads. `bench/audit_fleet.py` times both against one at a time.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from audit.canonical import parse_ts
from audit.checkpoint import CHECKPOINT_DIR, SEGMENT_DIR, checkpoint_name, parse_checkpoint
from audit.errors import AuditError, EpochKeyInvalidError, EpochKeyUnknownError, StoreError
from audit.keys import KeyProvider, KmsKeyProvider, LocalKeyProvider, Unwrapper
from audit.signers import KeyRing
from audit.stores import DirectorySource, S3Source, Source, SourceNote, parse_s3_url, s3_client
from audit.verify import Code, Outcome, Report, Severity, verify

LAYOUT_DIRS = (SEGMENT_DIR, CHECKPOINT_DIR)
ExecutorKind = Literal["process", "thread", "serial"]


class Status(StrEnum):
    """One log's result. Exit codes (the CLI): VALID 0; INVALID and STALE 1; INCONCLUSIVE 2."""

    VALID = "valid"
    INVALID = "invalid"  # an integrity failure other than staleness
    STALE = "stale"  # intact as far as verified, but the newest checkpoint is older than the bound
    INCONCLUSIVE = "inconclusive"


# --- what a fleet target holds -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogRef:
    """One log under a target: `name` relative to the target ("." for the target itself), where it is, and the
    nested logs' roots (relative to this one) whose objects are not its own. Picklable: workers open it."""

    name: str
    kind: Literal["dir", "s3"]
    location: str  # a directory path, or the bucket
    prefix: str = ""  # S3 only: the log's key prefix, ending in "/" (or empty)
    exclude: tuple[str, ...] = ()  # nested log roots, relative, ending in "/"
    endpoint_url: str | None = None
    region: str | None = None

    def describe(self) -> str:
        return self.location if self.kind == "dir" else f"s3://{self.location}/{self.prefix}"


@dataclass(frozen=True, slots=True)
class Discovery:
    target: str
    logs: tuple[LogRef, ...]
    stray: tuple[str, ...]  # objects under the target that belong to no log (relative names)
    unreadable: tuple[str, ...] = ()  # directories that could not be listed: a log may hide there

    @property
    def target_is_log(self) -> bool:
        return any(ref.name == "." for ref in self.logs)


def _nest(roots: list[str]) -> list[tuple[str, tuple[str, ...]]]:
    """Each root (relative, "" or ending in "/") with the nested roots under it, relative to it."""
    ordered = sorted(roots)
    return [(root, tuple(other[len(root):] for other in ordered if other != root and other.startswith(root)))
            for root in ordered]


def _name(root: str) -> str:
    return root.rstrip("/") or "."


def discover_directory(target: Path) -> Discovery:
    """Every log root under a local directory (the module docstring's definition)."""
    roots: list[str] = []
    stray: list[str] = []
    unreadable: list[str] = []

    def walk(path: Path, rel: str, under_log: bool) -> None:
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError as exc:
            unreadable.append(f"{rel or '.'}: {exc.strerror or exc}")
            return
        dirs = [e for e in entries if e.is_dir(follow_symlinks=False)]
        is_root = any(e.name in LAYOUT_DIRS for e in dirs)
        if is_root:
            roots.append(rel)
        elif not under_log:
            stray.extend(rel + e.name for e in entries if not e.is_dir(follow_symlinks=False))
        for entry in dirs:
            if is_root and entry.name in LAYOUT_DIRS:
                continue
            walk(Path(entry.path), f"{rel}{entry.name}/", under_log or is_root)

    walk(target, "", False)
    logs = tuple(LogRef(_name(root), "dir", str(target / root) if root else str(target), exclude=inner)
                 for root, inner in _nest(roots))
    return Discovery(str(target), logs, tuple(stray), tuple(unreadable))


def discover_s3(url: str, *, endpoint_url: str | None = None, region: str | None = None,
                client: Any = None) -> Discovery:
    """Every log root under an S3 prefix (the module docstring's definition); raises StoreError."""
    bucket, base = parse_s3_url(url)
    s3 = client if client is not None else s3_client(endpoint_url, region)
    roots: list[str] = []
    stray: list[str] = []
    paginator = s3.get_paginator("list_object_versions")

    def walk(prefix: str, under_log: bool) -> None:
        children: set[str] = set()
        objects: set[str] = set()
        try:
            for page in paginator.paginate(Bucket=bucket, Prefix=prefix, Delimiter="/"):
                children.update(p["Prefix"] for p in page.get("CommonPrefixes", []))
                objects.update(v["Key"] for v in page.get("Versions", []))
                objects.update(m["Key"] for m in page.get("DeleteMarkers", []))
        except Exception as exc:  # botocore: no such bucket, access denied, endpoint down
            raise StoreError("S3 ListObjectVersions failed", where=f"s3://{bucket}/{prefix}",
                             found=f"{type(exc).__name__}: {exc}") from exc
        layout = {prefix + d + "/" for d in LAYOUT_DIRS}
        is_root = bool(children & layout)
        if is_root:
            roots.append(prefix[len(base):])
        elif not under_log:
            stray.extend(key[len(base):] for key in sorted(objects))
        for child in sorted(children - layout if is_root else children):
            walk(child, under_log or is_root)

    walk(base, False)
    logs = tuple(LogRef(_name(root), "s3", bucket, base + root, inner, endpoint_url, region)
                 for root, inner in _nest(roots))
    return Discovery(f"s3://{bucket}/{base}", logs, tuple(stray))


def discover(target: str, *, endpoint_url: str | None = None, region: str | None = None) -> Discovery:
    if target.startswith("s3://"):
        return discover_s3(target, endpoint_url=endpoint_url, region=region)
    return discover_directory(Path(target))


class _Scoped:
    """A log's own objects: its source without the nested logs under it."""

    def __init__(self, inner: Source, exclude: tuple[str, ...]) -> None:
        self._inner = inner
        self._exclude = exclude

    def _mine(self, name: str) -> bool:
        return not name.startswith(self._exclude)

    def names(self) -> list[str]:
        return [n for n in self._inner.names() if self._mine(n)]

    def read(self, name: str) -> bytes:
        return self._inner.read(name)

    def notes(self) -> list[SourceNote]:
        return [n for n in self._inner.notes() if self._mine(n.name)]

    def describe(self) -> str:
        return self._inner.describe()


@functools.cache
def _s3(endpoint_url: str | None, region: str | None) -> Any:
    return s3_client(endpoint_url, region)  # one client per process (boto3 clients are thread-safe)


def _forget_clients() -> None:
    # A forked worker must not share the parent's pooled connections (two processes on one socket): it makes
    # its own S3 and KMS clients.
    _s3.cache_clear()
    _built.cache_clear()


def open_source(ref: LogRef) -> Source:
    inner: Source = DirectorySource(Path(ref.location)) if ref.kind == "dir" else S3Source(
        ref.location, ref.prefix, client=_s3(ref.endpoint_url, ref.region))
    return _Scoped(inner, ref.exclude) if ref.exclude else inner


# --- what the verifier trusts, rebuilt in each worker ----------------------------------------------------------


class MultiUnwrapper(Unwrapper):
    """Several local key files may be given (key rotation): try each for local epochs."""

    def __init__(self, providers: list[KeyProvider]) -> None:
        super().__init__(providers)
        self._all = providers

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        failures: list[AuditError] = []
        for provider in self._all:
            if provider.name != descriptor.get("provider"):
                continue
            try:
                return provider.unwrap(descriptor)
            except AuditError as exc:
                failures.append(exc)
        if failures:
            # The key file that holds the named key has the say (its refusal means the record is bad); "another
            # local key" from the other files means nothing while one of them answered otherwise.
            raise min(failures, key=lambda exc: 2 if isinstance(exc, EpochKeyUnknownError) else
                      0 if isinstance(exc, EpochKeyInvalidError) else 1)
        return super().unwrap(descriptor)


@dataclass(frozen=True, slots=True)
class Trust:
    """The keys a run trusts, as plain values, so each worker process builds its own ring and unwrapper."""

    public_keys: tuple[bytes, ...] = ()
    kms_key_ids: tuple[str, ...] = ()
    key_files: tuple[str, ...] = ()
    kms_decrypt: bool = False
    endpoint_url: str | None = None
    region: str | None = None

    def keyring(self) -> tuple[KeyRing, list[str]]:
        ring = KeyRing()
        notes: list[str] = []
        for data in self.public_keys:
            ring.add_bytes(data)
        for key_id in self.kms_key_ids:
            try:
                ring.add_kms(key_id, endpoint_url=self.endpoint_url, region=self.region)
            except AuditError as exc:
                notes.append(f"KMS key {key_id} unavailable: {exc}")
        return ring, notes

    def unwrapper(self) -> Unwrapper:
        providers: list[KeyProvider] = [LocalKeyProvider.from_file(Path(f)) for f in self.key_files]
        if self.kms_decrypt:
            providers.append(KmsKeyProvider("", endpoint_url=self.endpoint_url, region=self.region))
        return MultiUnwrapper(providers)


@functools.cache
def _built(trust: Trust) -> tuple[KeyRing, Unwrapper]:
    """Once per process (threads share it: KeyRing is read-only, Unwrapper's cache is a dict)."""
    return trust.keyring()[0], trust.unwrapper()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_clients)


# --- one log -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogResult:
    ref: LogRef
    status: Status
    report: Report | None  # None: the worker failed before the verifier could report (`error` says why)
    closed: bool = False  # the newest checkpoint seals a shutdown record and nothing follows it
    head_age: float | None = None  # seconds since the newest checkpoint
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"name": self.ref.name, "source": self.ref.describe(), "status": str(self.status),
                "closed": self.closed,
                "head_age_seconds": None if self.head_age is None else round(self.head_age, 3),
                "error": self.error, "report": None if self.report is None else self.report.to_json()}


def status_of(report: Report) -> Status:
    errors = {p.code for p in report.problems if p.severity == Severity.ERROR}
    if errors - {Code.STALE_TAIL}:
        return Status.INVALID
    if errors:
        return Status.STALE
    return Status.INCONCLUSIVE if report.outcome == Outcome.INCONCLUSIVE else Status.VALID


def _closed(source: Source, report: Report) -> bool:
    if report.head_n is None or report.records != report.size:
        return False
    try:
        head = parse_checkpoint(source.read(checkpoint_name(report.head_n)), checkpoint_name(report.head_n))
    except AuditError:
        return False
    return head.checkpoint.reason == "shutdown" and head.checkpoint.size == report.size


def verify_log(ref: LogRef, trust: Trust, max_age: float | None = None, now: float | None = None) -> LogResult:
    """Verify one log of a fleet (in a worker). Never raises: a failure is an INCONCLUSIVE result."""
    now = time.time() if now is None else now
    try:
        ring, unwrapper = _built(trust)
        source = open_source(ref)
        report = verify(source, ring, unwrapper, max_age=max_age, now=now)
        closed = _closed(source, report)
        if closed and any(p.code == Code.STALE_TAIL for p in report.problems):
            # A clean shutdown is the end of the log, not a pod that stopped anchoring.
            report = dataclasses.replace(report, problems=tuple(
                p for p in report.problems if p.code != Code.STALE_TAIL))
        age = None
        if report.head_ts is not None:
            try:
                age = now - parse_ts(report.head_ts)
            except ValueError:
                age = None
        return LogResult(ref, status_of(report), report, closed, age)
    except Exception as exc:  # one log's failure must not stop the fleet; it is reported
        return LogResult(ref, Status.INCONCLUSIVE, None, error=f"{type(exc).__name__}: {exc}"[:500])


# --- the fleet -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FleetReport:
    target: str
    results: tuple[LogResult, ...]
    stray: tuple[str, ...]
    jobs: int
    executor: str
    seconds: float
    unreadable: tuple[str, ...] = ()

    @property
    def status(self) -> Status:
        """The fleet's worst: invalid, then stale (both exit 1), then inconclusive; no log at all, or a
        directory that could not be listed, is inconclusive (something may not have been verified)."""
        found = {r.status for r in self.results}
        for status in (Status.INVALID, Status.STALE, Status.INCONCLUSIVE):
            if status in found:
                return status
        return Status.VALID if self.results and not self.unreadable else Status.INCONCLUSIVE

    def summary(self) -> dict[str, int]:
        out = {str(s): 0 for s in Status}
        for r in self.results:
            out[str(r.status)] += 1
        out["logs"] = len(self.results)
        out["records"] = sum(r.report.records for r in self.results if r.report is not None)
        out["closed"] = sum(1 for r in self.results if r.closed)
        out["stray"] = len(self.stray)
        return out

    def to_json(self) -> dict[str, object]:
        return {"target": self.target, "status": str(self.status), "summary": self.summary(),
                "jobs": self.jobs, "executor": self.executor, "seconds": round(self.seconds, 3),
                "stray": list(self.stray), "unreadable": list(self.unreadable),
                "logs": [r.to_json() for r in self.results]}


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _executor(kind: ExecutorKind, jobs: int, start_method: str | None) -> Executor:
    if kind == "thread":
        return ThreadPoolExecutor(jobs, thread_name_prefix="warden-verify")
    import multiprocessing
    import threading

    # fork is the cheapest start and safe while the caller runs no other thread (the CLI); a caller with threads
    # (a test's S3 server) gets spawn, as a fork could copy a lock another thread holds. Not forkserver: its
    # server keeps the environment of its first use, and workers must see the caller's (AWS credentials).
    method = start_method or ("fork" if threading.active_count() == 1 and sys.platform == "linux" else "spawn")
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context(method))


def verify_fleet(discovery: Discovery, trust: Trust, *, max_age: float | None = None, now: float | None = None,
                 jobs: int | None = None, executor: ExecutorKind = "process",
                 progress: Callable[[int, int], None] | None = None,
                 start_method: str | None = None) -> FleetReport:
    """Verify every discovered log, `jobs` at a time; results in name order. `start_method` (fork, spawn,
    forkserver) overrides how worker processes start, for the benchmark."""
    started = time.monotonic()
    now = time.time() if now is None else now
    logs = list(discovery.logs)
    jobs = max(1, min(jobs or default_jobs(), len(logs) or 1))
    kind: ExecutorKind = "serial" if jobs == 1 else executor
    results: list[LogResult] = []
    if kind == "serial":
        for i, ref in enumerate(logs):
            results.append(verify_log(ref, trust, max_age, now))
            if progress is not None:
                progress(i + 1, len(logs))
    else:
        with _executor(kind, jobs, start_method) as pool:
            futures: dict[Future[LogResult], LogRef] = {
                pool.submit(verify_log, ref, trust, max_age, now): ref for ref in logs}
            for done, future in enumerate(as_completed(futures), 1):
                try:
                    results.append(future.result())
                except Exception as exc:  # a worker process died (BrokenProcessPool, ...)
                    results.append(LogResult(futures[future], Status.INCONCLUSIVE, None,
                                             error=f"{type(exc).__name__}: {exc}"[:500]))
                if progress is not None:
                    progress(done, len(logs))
    results.sort(key=lambda r: r.ref.name)
    return FleetReport(discovery.target, tuple(results), discovery.stray, jobs, kind,
                       time.monotonic() - started, discovery.unreadable)
