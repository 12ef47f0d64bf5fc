"""The audit log writer: append from any thread, group-commit to segment files, roll signed checkpoints.

Two background threads, no asyncio:

- the writer drains the append queue, chains MACs, writes one batch per fsync (group commit) and wakes the
  tickets of the batch; on request it seals the open segment (closes it, hands over its hash and leaves);
- the roller decides when to checkpoint (at most `checkpoint_interval` after growth, a heartbeat record after
  `heartbeat_interval` idle, a new epoch key every `epoch_interval`), signs, writes the checkpoint and mirrors
  it to the configured store, retrying with backoff. A failure never drops records: unanchored segments stay
  pending and the next successful checkpoint covers them all.

Layout of `directory` (also the default store): `segments/<first seq>.jsonl` and `checkpoints/<n>.json`.
A segment holds exactly the records sealed by one checkpoint (the last one is the open, unanchored tail).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from audit.canonical import format_ts
from audit.checkpoint import (
    CHECKPOINT_DIR,
    SEGMENT_DIR,
    Checkpoint,
    CheckpointFormatError,
    SegmentRef,
    SignedCheckpoint,
    checkpoint_name,
    parse_checkpoint,
    segment_name,
)
from audit.errors import AuditError, ConfigError, KeyUnavailableError, LogClosedError, RecordError
from audit.keys import DIGEST_KEY_FILE, KeyProvider, KmsKeyProvider, LocalKeyProvider, load_or_create_hex_key
from audit.merkle import CompactRange, consistency_proof, frontier_range_hash, leaf_hash
from audit.records import (
    GENESIS_MAC,
    LIFECYCLE_KINDS,
    Kind,
    chain_mac,
    check_body,
    check_kind,
    digest_hex,
    encode_record,
    make_line,
    split_line,
)
from audit.signers import SIGNING_KEY_FILE, KmsSigner, LocalSigner, Signer
from audit.stores import TMP_PREFIX, DirectoryStore, S3Store, Store, fsync_dir

KEY_DIR_NAME = "keys"
_ORIGIN_PART_FORBIDDEN = frozenset("/\n\r\t ")


def _new_boot_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Origin:
    """Who wrote a record: cluster/namespace/pod/boot id. A fresh boot id per process start."""

    cluster: str = "local"
    namespace: str = "default"
    pod: str = field(default_factory=socket.gethostname)
    boot_id: str = field(default_factory=_new_boot_id)

    def __post_init__(self) -> None:
        for name in ("cluster", "namespace", "pod", "boot_id"):
            value = getattr(self, name)
            if not value or _ORIGIN_PART_FORBIDDEN & set(value):
                raise ConfigError("origin parts must be non-empty without '/' or whitespace", where=name,
                                  found=value)

    def __str__(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.pod}/{self.boot_id}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Origin:
        """From the usual pod environment: WARDEN_CLUSTER, POD_NAMESPACE, POD_NAME (downward API), else
        the host name; a fresh boot id."""
        env = os.environ if environ is None else environ
        return cls(cluster=env.get("WARDEN_CLUSTER") or "local", namespace=env.get("POD_NAMESPACE") or "default",
                   pod=env.get("POD_NAME") or socket.gethostname())


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """Everything the log needs; the defaults need no network and no configuration.

    `directory` is the local log (segments are group-committed there; it is also the default store).
    `key_dir` defaults to `<directory>/../keys`, holding `chain.key`, `digest.key`, `signing.pem` and
    `signing.pub.pem`, created on first use. `store` is an extra write-once mirror such as `S3Store`.
    """

    directory: Path
    origin: Origin = field(default_factory=Origin)
    key_dir: Path | None = None
    key_provider: KeyProvider | None = None
    signer: Signer | None = None
    store: Store | None = None
    digest_key: bytes | None = None
    batch_window: float = 0.002
    max_batch: int = 8192
    checkpoint_interval: float = 5.0
    heartbeat_interval: float = 60.0
    epoch_interval: float = 3600.0
    retry_initial: float = 0.5
    retry_max: float = 30.0
    tick: float = 0.05
    fsync: bool = True
    clock: Callable[[], float] = time.time

    def resolved_key_dir(self) -> Path:
        return self.key_dir if self.key_dir is not None else self.directory.absolute().parent / KEY_DIR_NAME


def aws_config(directory: Path, *, origin: Origin, s3_url: str | None = None, data_key_id: str | None = None,
               signing_key_id: str | None = None, endpoint_url: str | None = None, region: str | None = None,
               retention_days: int = 365, **options: object) -> AuditConfig:
    """Production wiring, each part optional: KMS GenerateDataKey for K_epoch (`data_key_id`), KMS Sign
    (`signing_key_id`, an ECC_NIST_P256 SIGN_VERIFY key), and an S3 Object Lock mirror (`s3_url`,
    s3://bucket/prefix). Contacts AWS now, so a missing key or an unlocked bucket fails at start-up."""
    return AuditConfig(
        directory=directory, origin=origin,
        key_provider=KmsKeyProvider(data_key_id, endpoint_url=endpoint_url, region=region) if data_key_id
        else None,
        signer=KmsSigner(signing_key_id, endpoint_url=endpoint_url, region=region) if signing_key_id else None,
        store=S3Store.from_url(s3_url, retention_days=retention_days, endpoint_url=endpoint_url, region=region)
        if s3_url else None,
        **options)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class AuditStats:
    """For metrics. `*_total` fields count since this process opened the log (Prometheus counters); the
    sizes are positions in the whole log (gauges): records appended, fsynced, covered by a stored checkpoint."""

    records_total: int
    checkpoints_total: int
    batches_total: int
    write_failures_total: int
    sign_failures_total: int
    store_failures_total: int
    key_failures_total: int
    size_appended: int
    size_durable: int
    size_anchored: int
    anchor_lag_seconds: float


@dataclass(frozen=True, slots=True)
class AppendTicket:
    """Handle for one appended record. `wait` returns True once its batch is fsynced."""

    seq: int
    _log: AuditLog = field(repr=False, compare=False)

    def done(self) -> bool:
        return self._log._durable > self.seq

    def wait(self, timeout: float | None = None) -> bool:
        return self._log._wait_durable(self.seq, timeout)


@dataclass(slots=True)
class _Seal:
    segments: list[SegmentRef]
    size: int
    frontier: CompactRange
    leaves: list[bytes]


_Item = tuple[int, float, bytes, bytes | None]  # seq, append time, record bytes, new epoch key


@dataclass(slots=True)
class _Recovered:
    log_id: str
    size: int
    last_mac: bytes
    frontier: CompactRange  # the tree over every record on disk, tail included
    head_tree: CompactRange  # the tree as of the newest checkpoint
    head: SignedCheckpoint | None
    tail: list[SegmentRef]
    tail_leaves: list[bytes]
    cut: dict[str, object] | None


def _read_lines(path: Path) -> tuple[list[bytes], int]:
    """Complete lines of a segment and the byte length they span (anything after is a torn write)."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return (data[:end].split(b"\n")[:-1] if end else []), end


def _line_seq(line: bytes) -> int | None:
    """The seq of a well-formed record line, else None (used to find where a torn tail starts)."""
    import json

    try:
        _mac, record = split_line(line)
        obj = json.loads(record)
    except (RecordError, ValueError, RecursionError):  # RecursionError: nesting past the parser's stack
        return None
    seq = obj.get("seq") if isinstance(obj, dict) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


class AuditLog:
    """The tamper-evident audit log. Build with `AuditLog.open(config)`; `close()` at shutdown."""

    def __init__(self, config: AuditConfig, key_provider: KeyProvider, signer: Signer, digest_key: bytes,
                 recovered: _Recovered) -> None:
        self.config = config
        self.origin = str(config.origin)
        self.directory = config.directory
        self._keys = key_provider
        self._signer = signer
        self._digest_key = digest_key
        self._clock = config.clock
        self._local = DirectoryStore(config.directory)
        self.log_id = recovered.log_id

        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # writer waits here for items or a seal request
        self._durable_cond = threading.Condition(threading.Lock())
        self._pending: list[_Item] = []
        self._next_seq = recovered.size + sum(s.last - s.first + 1 for s in recovered.tail)
        self._durable = self._next_seq
        self._appended = 0
        self._fatal: BaseException | None = None
        self._closing = False
        self._closed = False
        self._stop_writer = False
        self._seal_requested = False
        self._seal_result: _Seal | None = None
        self._seal_done = threading.Condition(self._lock)
        self._seal_epoch = 0

        # writer-owned state
        self._mac_key: bytes | None = None
        self._prev_mac = recovered.last_mac
        self._tree = recovered.frontier
        self._leaves: list[bytes] = []
        self._seg_file: BinaryIO | None = None
        self._seg_name = ""
        self._seg_first = 0
        self._seg_hash = hashlib.sha256()
        self._seg_bytes = 0
        self._segment_start_times: dict[int, float] = {}

        # roller-owned state
        head = recovered.head
        self._head = head.checkpoint if head else None
        self._head_hash = head.checkpoint.body_hash() if head else None
        self._anchored_tree = recovered.head_tree.copy()
        self._pending_seals: list[_Seal] = []
        self._mirror_backlog: list[str] = []
        self._mirrored_size = head.checkpoint.size if head else 0
        self._anchored_size = head.checkpoint.size if head else 0
        self._last_anchor_time = self._clock()
        self._next_attempt = 0.0
        self._backoff = config.retry_initial
        self._epoch = -1
        self._epoch_started = 0.0
        self._failed_attempts = 0

        self._counts = {"batches": 0, "checkpoints": 0, "write_failures": 0, "sign_failures": 0,
                        "store_failures": 0, "key_failures": 0}
        self._roller_wake = threading.Event()
        self._writer_thread = threading.Thread(target=self._writer_loop, name="warden-audit-writer", daemon=True)
        self._roller_thread = threading.Thread(target=self._roller_loop, name="warden-audit-roller", daemon=True)

    # --- construction and recovery --------------------------------------------------------------------

    @classmethod
    def open(cls, config: AuditConfig) -> AuditLog:
        """Recover the directory (cut a torn tail, anchor what the last boot left unanchored), write this
        boot's first record linked to the last checkpoint, and start the background threads.

        Raises ConfigError, KeyUnavailableError or SignerError when the log cannot be written safely
        (fail closed: an unusable key or signer is a start-up error)."""
        key_dir = config.resolved_key_dir()
        if key_dir.absolute().is_relative_to(config.directory.absolute()):
            # The log directory is what gets shipped and audited; private keys must never be part of it.
            raise ConfigError("the key directory must not be inside the log directory", where=str(key_dir),
                              expected=f"outside {config.directory}")
        provider = config.key_provider or LocalKeyProvider.from_file(key_dir / "chain.key", create=True)
        signer = config.signer or LocalSigner.from_file(key_dir / SIGNING_KEY_FILE, create=True)
        digest_key = config.digest_key or load_or_create_hex_key(key_dir / DIGEST_KEY_FILE)
        for sub in (SEGMENT_DIR, CHECKPOINT_DIR):
            (config.directory / sub).mkdir(parents=True, exist_ok=True)
        recovered = _recover(config.directory)
        log = cls(config, provider, signer, digest_key, recovered)
        if recovered.tail:
            seal = _Seal(list(recovered.tail), recovered.frontier.size, recovered.frontier.copy(),
                         recovered.tail_leaves)
            log._pending_seals.append(seal)
            if not log._anchor("recovery"):
                raise AuditError("cannot anchor the previous boot's unanchored records",
                                 where=str(config.directory))
        if config.store is not None:
            log._queue_unmirrored()
        head = log._head
        link = None if head is None else {"n": head.n, "hash": log._head_hash, "size": head.size,
                                          "root": head.root.hex()}
        log._start_epoch(boot=True, extra={"prev_checkpoint": link, "recovered": recovered.cut})
        log._writer_thread.start()
        log._roller_thread.start()
        return log

    # --- public API -------------------------------------------------------------------------------------

    def append(self, kind: str, body: Mapping[str, object]) -> AppendTicket:
        """Queue one record; returns at once (thread-safe, never waits for I/O). Raises RecordError for a
        body that cannot be written canonically (floats, reserved keys) and LogClosedError after close."""
        check_kind(kind)
        if kind in LIFECYCLE_KINDS:
            raise RecordError("lifecycle record kinds are written by the log itself", found=kind, where="kind")
        check_body(body)
        return self._append(kind, body, None)

    def digest(self, data: bytes) -> str:
        """Keyed digest (HMAC-SHA256 with the digest key, hex) for input/output content."""
        return digest_hex(self._digest_key, data)

    def digest_stream(self) -> hmac.HMAC:
        """An incremental keyed digest (same key as `digest`), for answers that arrive in chunks."""
        return hmac.new(self._digest_key, digestmod=hashlib.sha256)

    @property
    def digest_key(self) -> bytes:
        """The digest key itself, for in-process digesters that must agree with the records (never log it)."""
        return self._digest_key

    def anchor_lag_seconds(self) -> float:
        """Age of the oldest appended record not yet covered by a stored checkpoint (0 when none)."""
        anchored = min(self._anchored_size, self._mirrored_size) if self.config.store else self._anchored_size
        with self._lock:
            if self._next_seq <= anchored:
                return 0.0
            started = self._segment_start_times.get(anchored)
            if started is None:
                later = [t for s, t in self._segment_start_times.items() if s > anchored]
                started = min(later) if later else (self._pending[0][1] if self._pending else None)
        return 0.0 if started is None else max(0.0, self._clock() - started)

    def healthy(self) -> bool:
        """True while records can be made durable and anchored: both threads run, the writer has not failed,
        and the log is open. For readiness (audit fails closed)."""
        return (self._fatal is None and not self._closing and self._writer_thread.is_alive()
                and self._roller_thread.is_alive())

    def stats(self) -> AuditStats:
        c = self._counts
        return AuditStats(self._appended, c["checkpoints"], c["batches"], c["write_failures"],
                          c["sign_failures"], c["store_failures"], c["key_failures"], self._next_seq,
                          self._durable, self._anchored_size, self.anchor_lag_seconds())

    @property
    def head(self) -> Checkpoint | None:
        """The newest stored checkpoint."""
        return self._head

    @property
    def public_key_der(self) -> bytes:
        return self._signer.public_key_der

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything appended so far is durable."""
        with self._lock:
            last = self._next_seq - 1
        return last < 0 or self._wait_durable(last, timeout)

    def checkpoint_now(self, timeout: float = 10.0) -> bool:
        """Seal and anchor everything durable now (from any thread but the roller); True on success."""
        deadline = time.monotonic() + timeout
        if not self.flush(timeout):
            return False
        target = self._durable
        next_force = 0.0
        while time.monotonic() < deadline:
            if self._anchored_size >= target:
                return True
            if time.monotonic() >= next_force:
                # Re-arm: a failed attempt (signer or store down) is retried until the deadline.
                self._force_checkpoint = True
                self._roller_wake.set()
                next_force = time.monotonic() + max(0.1, self.config.retry_initial)
            time.sleep(0.005)
        return self._anchored_size >= target

    def close(self, timeout: float = 10.0) -> bool:
        """Append the shutdown record, write the final checkpoint, stop both threads. True when every record
        is durable and anchored; False leaves them durable for the next boot to anchor."""
        with self._lock:
            if self._closing:
                return self._closed
            self._closing = True  # from here on only the log's own records are accepted
        self._append(Kind.SHUTDOWN, {"records": self._next_seq}, None, internal=True)
        deadline = time.monotonic() + timeout
        ok = self.checkpoint_now(timeout)
        self._stop_roller = True
        self._roller_wake.set()
        self._roller_thread.join(max(0.0, deadline - time.monotonic()))
        # The roller is gone: drain the mirror backlog here, still retrying until the deadline.
        while self._mirror_backlog and time.monotonic() < deadline:
            self._next_attempt = 0.0
            self._mirror()
            if self._mirror_backlog:
                time.sleep(min(self._backoff, max(0.0, deadline - time.monotonic())))
        ok = ok and not self._mirror_backlog
        with self._lock:
            self._stop_writer = True
            self._work.notify_all()
        self._writer_thread.join(timeout)
        if self._seg_file is not None:
            self._seg_file.close()
            self._seg_file = None
        self._closed = ok
        return ok and self._anchored_size == self._next_seq

    # --- appending ----------------------------------------------------------------------------------------

    _force_checkpoint = False
    _stop_roller = False

    def _append(self, kind: str, body: Mapping[str, object], key: bytes | None, *,
                internal: bool = False) -> AppendTicket:
        with self._lock:
            if self._closing and not internal:
                raise LogClosedError("the audit log is closed", where=str(self.directory))
            if self._fatal is not None:
                raise AuditError("the audit writer stopped", where=str(self.directory),
                                 found=repr(self._fatal))
            seq = self._next_seq
            now = self._clock()
            record = encode_record(seq, format_ts(now), self.origin, kind, body)
            self._next_seq = seq + 1
            self._appended += 1
            self._pending.append((seq, now, record, key))
            if len(self._pending) == 1:
                self._work.notify()
        return AppendTicket(seq, self)

    def _wait_durable(self, seq: int, timeout: float | None) -> bool:
        if self._durable > seq:
            return True
        with self._durable_cond:
            self._durable_cond.wait_for(lambda: self._durable > seq or self._fatal is not None, timeout)
        return self._durable > seq

    def _start_epoch(self, *, boot: bool, extra: Mapping[str, object] | None = None) -> None:
        self._epoch += 1
        context = {"warden:log": self.log_id, "warden:origin": self.origin, "warden:epoch": str(self._epoch)}
        epoch_key = self._keys.new_key(context)
        body: dict[str, object] = {
            "log": self.log_id, "epoch": self._epoch, "boot": boot, "key": dict(epoch_key.descriptor),
            "signer": self._signer.fingerprint,
            "params": {"checkpoint_interval_ms": int(self.config.checkpoint_interval * 1000),
                       "heartbeat_interval_ms": int(self.config.heartbeat_interval * 1000),
                       "epoch_interval_ms": int(self.config.epoch_interval * 1000)},
        }
        body.update(extra or {})
        check_body(body)
        self._append(Kind.EPOCH_START, body, epoch_key.key, internal=True)
        self._epoch_started = self._clock()

    # --- writer thread ---------------------------------------------------------------------------------

    def _writer_loop(self) -> None:
        try:
            self._writer_steps()
        except BaseException as exc:  # a bug, not I/O (I/O errors are retried): fail closed, visibly
            self._fatal = exc
            with self._durable_cond:
                self._durable_cond.notify_all()
            raise

    def _writer_steps(self) -> None:
        window = self.config.batch_window
        while True:
            with self._lock:
                while not self._pending and not self._seal_requested and not self._stop_writer:
                    self._work.wait()
                if self._pending and window > 0 and not self._seal_requested and not self._stop_writer:
                    # Group commit: let a batch gather for at most one window. Monotonic time, not the
                    # injected wall clock, so a clock step can never hold records back.
                    deadline = time.monotonic() + window
                    while len(self._pending) < self.config.max_batch:
                        left = deadline - time.monotonic()
                        if left <= 0 or not self._work.wait(left):
                            break
                batch, self._pending = self._pending, []
                seal = self._seal_requested
                stop = self._stop_writer
            if batch:
                self._write_batch(batch)
            if seal:
                result = self._seal_segment()
                with self._lock:
                    self._seal_result = result
                    self._seal_requested = False
                    self._seal_epoch += 1
                    self._seal_done.notify_all()
            if stop and not batch:
                with self._lock:
                    if not self._pending:
                        return

    def _write_batch(self, batch: list[_Item]) -> None:
        key = self._mac_key
        prev = self._prev_mac
        lines: list[bytes] = []
        leaves: list[bytes] = []
        sha = hashlib.sha256
        for _seq, _t, record, new_key in batch:
            if new_key is not None:
                key = new_key
            if key is None:  # cannot happen: open() appends the boot epoch before any other record
                raise AuditError("no chain key before the first record")
            prev = chain_mac(key, prev, record)
            line = make_line(prev, record)
            lines.append(line)
            leaves.append(sha(b"\x00" + line).digest())
        data = b"\n".join(lines) + b"\n"
        while True:
            try:
                if self._seg_file is None:
                    self._open_segment(batch[0][0], batch[0][1])
                assert self._seg_file is not None
                start = self._seg_bytes
                try:
                    self._seg_file.write(data)
                    self._seg_file.flush()
                    if self.config.fsync:
                        os.fdatasync(self._seg_file.fileno())
                except OSError:
                    # After a failed fsync the page cache cannot be trusted: cut back and write it again.
                    self._seg_file.truncate(start)
                    self._seg_file.seek(start)
                    raise
                break
            except OSError:
                self._counts["write_failures"] += 1
                time.sleep(min(self.config.retry_max, 0.05 * (1 + self._counts["write_failures"] % 20)))
        self._seg_hash.update(data)
        self._seg_bytes += len(data)
        self._mac_key = key
        self._prev_mac = prev
        tree = self._tree
        for leaf in leaves:
            tree.append(leaf)
        self._leaves.extend(leaves)
        self._counts["batches"] += 1
        with self._durable_cond:
            self._durable = batch[-1][0] + 1
            self._durable_cond.notify_all()

    def _open_segment(self, first_seq: int, first_time: float) -> None:
        self._seg_name = segment_name(first_seq)
        path = self.directory / self._seg_name
        self._seg_file = open(path, "ab")  # noqa: SIM115 - held open across batches
        if self.config.fsync:
            fsync_dir(path.parent)
        self._seg_first = first_seq
        self._seg_hash = hashlib.sha256()
        self._seg_bytes = 0
        with self._lock:
            self._segment_start_times[first_seq] = first_time

    def _seal_segment(self) -> _Seal | None:
        if self._seg_file is None or self._seg_bytes == 0:
            return None
        self._seg_file.close()
        self._seg_file = None
        ref = SegmentRef(self._seg_name, self._seg_hash.hexdigest(), self._seg_bytes, self._seg_first,
                         self._tree.size - 1)
        with contextlib.suppress(OSError):
            os.chmod(self.directory / self._seg_name, 0o444)  # sealed: read-only from now on
        seal = _Seal([ref], self._tree.size, self._tree.copy(), self._leaves)
        self._leaves = []
        return seal

    # --- roller thread ---------------------------------------------------------------------------------

    def _request_seal(self, timeout: float) -> _Seal | None:
        with self._lock:
            epoch = self._seal_epoch
            self._seal_requested = True
            self._work.notify_all()
            self._seal_done.wait_for(lambda: self._seal_epoch != epoch, timeout)
            result, self._seal_result = self._seal_result, None
            return result

    def _roller_loop(self) -> None:
        cfg = self.config
        while not self._stop_roller:
            self._roller_wake.wait(cfg.tick)
            self._roller_wake.clear()
            if self._stop_roller:
                break
            try:
                self._roll_once()
            except Exception:  # the roller must survive anything; failures are counted in _anchor
                self._counts["sign_failures"] += 1
                time.sleep(cfg.tick)

    def _roll_once(self) -> None:
        cfg = self.config
        now = self._clock()
        if now < self._last_anchor_time or now < self._epoch_started:
            # The wall clock stepped back: restart the schedules from now rather than stall them.
            self._last_anchor_time = min(self._last_anchor_time, now - cfg.checkpoint_interval)
            self._epoch_started = min(self._epoch_started, now)
        force, self._force_checkpoint = self._force_checkpoint, False
        if self._mirror_backlog and now >= self._next_attempt:
            self._mirror()
        if not self._closing and now - self._epoch_started >= cfg.epoch_interval:
            try:
                self._start_epoch(boot=False)
            except KeyUnavailableError:
                self._counts["key_failures"] += 1
                self._epoch -= 1
                self._epoch_started = now - cfg.epoch_interval + cfg.retry_max
        grown = self._next_seq > self._anchored_size or bool(self._pending_seals)
        if not grown and not self._closing and now - self._last_anchor_time >= cfg.heartbeat_interval:
            self._append(Kind.HEARTBEAT, {"anchored": self._anchored_size}, None, internal=True)
            self._heartbeat_due = True
            grown = True
        # Start early by one tick plus what the last checkpoint took, so the anchor lands within the interval.
        due = force or now - self._last_anchor_time + cfg.tick + self._anchor_cost >= cfg.checkpoint_interval
        if grown and due and (force or now >= self._next_attempt):
            reason = "shutdown" if self._closing else "heartbeat" if self._heartbeat_due else "interval"
            if force and not self._closing:
                reason = "manual"
            if self._anchor(reason):
                self._heartbeat_due = False

    _heartbeat_due = False

    _anchor_cost = 0.0

    def _anchor(self, reason: str) -> bool:
        """Seal (unless earlier seals still wait), sign, store locally, mirror. False on failure."""
        started = time.monotonic()
        try:
            return self._anchor_steps(reason)
        finally:
            self._anchor_cost = min(1.0, time.monotonic() - started)

    def _anchor_steps(self, reason: str) -> bool:
        cfg = self.config
        if not self._pending_seals:
            seal = self._request_seal(timeout=max(1.0, cfg.tick * 20)) if self._writer_thread.is_alive() \
                else None
            if seal is not None:
                self._pending_seals.append(seal)
        if not self._pending_seals:
            return True
        last = self._pending_seals[-1]
        base = self._anchored_tree
        leaves = [leaf for seal in self._pending_seals for leaf in seal.leaves]
        head = self._head
        proof = consistency_proof(base.size, last.size, frontier_range_hash(base, leaves)) if base.size else []
        checkpoint = Checkpoint(
            log=self.log_id, origin=self.origin, n=0 if head is None else head.n + 1, size=last.size,
            root=last.frontier.root(), prev=self._head_hash, prev_size=0 if head is None else head.size,
            consistency=tuple(proof), segments=tuple(s for seal in self._pending_seals for s in seal.segments),
            key=self._signer.fingerprint, ts=format_ts(self._clock()), reason=reason)
        body = checkpoint.body_bytes()
        try:
            signature = self._signer.sign(body)
        except AuditError:
            self._counts["sign_failures"] += 1
            self._retry_later()
            return False
        signed = SignedCheckpoint(checkpoint, signature, last.frontier.frontier)
        name = checkpoint_name(checkpoint.n)
        try:
            self._local.put(name, signed.to_bytes())
        except AuditError:
            self._counts["store_failures"] += 1
            self._retry_later()
            return False
        self._head = checkpoint
        self._head_hash = hashlib.sha256(body).hexdigest()
        self._anchored_tree = last.frontier.copy()
        self._anchored_size = last.size
        if self.config.store is None:
            self._mirrored_size = last.size
        self._pending_seals = []
        self._counts["checkpoints"] += 1
        self._last_anchor_time = self._clock()
        self._backoff = cfg.retry_initial
        self._next_attempt = 0.0
        self._prune_times()
        if self.config.store is not None:
            self._mirror_backlog.extend([s.name for s in checkpoint.segments] + [name])
            self._mirror()
        return True

    def _prune_times(self) -> None:
        anchored = min(self._anchored_size, self._mirrored_size)
        with self._lock:
            for seq in [s for s in self._segment_start_times if s < anchored]:
                del self._segment_start_times[seq]

    def _retry_later(self) -> None:
        self._next_attempt = self._clock() + self._backoff
        self._backoff = min(self.config.retry_max, self._backoff * 2)

    def _mirror(self) -> None:
        store = self.config.store
        assert store is not None
        while self._mirror_backlog:
            name = self._mirror_backlog[0]
            try:
                store.put(name, (self.directory / name).read_bytes())
            except (AuditError, OSError):
                self._counts["store_failures"] += 1
                self._retry_later()
                return
            self._mirror_backlog.pop(0)
            if name.startswith(CHECKPOINT_DIR + "/"):
                self._mirrored_size = parse_checkpoint((self.directory / name).read_bytes(),
                                                       name).checkpoint.size
                self._prune_times()

    def _queue_unmirrored(self) -> None:
        """After a restart, re-queue the checkpoints (and their segments) the store does not have yet."""
        store = self.config.store
        if store is None or self._head is None:
            return
        exists = store.exists
        names: list[str] = []
        n = self._head.n
        while n >= 0 and not exists(checkpoint_name(n)):
            cp = parse_checkpoint((self.directory / checkpoint_name(n)).read_bytes(), checkpoint_name(n))
            names[:0] = [s.name for s in cp.checkpoint.segments if not exists(s.name)] + [checkpoint_name(n)]
            n -= 1
        if names:
            self._mirrored_size = 0 if n < 0 else parse_checkpoint(
                (self.directory / checkpoint_name(n)).read_bytes(), "").checkpoint.size
            self._mirror_backlog.extend(names)
            self._mirror()


# --- recovery ------------------------------------------------------------------------------------------


def _segment_files(directory: Path) -> list[tuple[int, Path]]:
    out = []
    for path in (directory / SEGMENT_DIR).iterdir():
        if path.name.startswith(TMP_PREFIX):
            path.unlink()
            continue
        stem = path.name.removesuffix(".jsonl")
        if stem.isdigit() and path.name.endswith(".jsonl"):
            out.append((int(stem), path))
    return sorted(out)


def _latest_checkpoint(directory: Path) -> SignedCheckpoint | None:
    best: tuple[int, Path] | None = None
    for path in (directory / CHECKPOINT_DIR).iterdir():
        if path.name.startswith(TMP_PREFIX):
            path.unlink()
            continue
        stem = path.name.removesuffix(".json")
        if stem.isdigit() and (best is None or int(stem) > best[0]):
            best = (int(stem), path)
    if best is None:
        return None
    try:
        return parse_checkpoint(best[1].read_bytes(), str(best[1]))
    except (CheckpointFormatError, OSError) as exc:
        raise ConfigError("the newest checkpoint is unreadable; refusing to continue the log",
                          where=str(best[1])) from exc


def _rescan(directory: Path, size: int) -> CompactRange:
    """Rebuild the tree of the first `size` records from the segments (when the frontier hint is unusable)."""
    tree = CompactRange()
    for first, path in _segment_files(directory):
        if first >= size:
            break
        lines, _ = _read_lines(path)
        for line in lines[:size - tree.size]:
            tree.append(leaf_hash(line))
    if tree.size != size:
        raise ConfigError("segments hold fewer records than the newest checkpoint", where=str(directory),
                          expected=size, found=tree.size)
    return tree


def _tree_at(directory: Path, head: SignedCheckpoint | None) -> CompactRange:
    if head is None:
        return CompactRange()
    size = head.checkpoint.size
    if len(head.frontier) == size.bit_count():
        tree = CompactRange(size, head.frontier)
        if tree.root() == head.checkpoint.root:
            return tree
    tree = _rescan(directory, size)
    if tree.root() != head.checkpoint.root:
        raise ConfigError("segments do not match the newest checkpoint's root", where=str(directory))
    return tree


def _recover(directory: Path) -> _Recovered:
    head = _latest_checkpoint(directory)
    size = head.checkpoint.size if head else 0
    segments = _segment_files(directory)
    tree = _tree_at(directory, head)
    last_mac = GENESIS_MAC
    sealed = [(f, p) for f, p in segments if f < size]
    if sealed:
        lines, _ = _read_lines(sealed[-1][1])
        if lines:
            last_mac, _ = split_line(lines[-1])
    tail_files = [(f, p) for f, p in segments if f >= size]
    tail: list[SegmentRef] = []
    leaves: list[bytes] = []
    cut: dict[str, object] | None = None
    expected = size
    for index, (first, path) in enumerate(tail_files):
        if first != expected:
            raise ConfigError("unanchored segments are not contiguous with the log", where=str(path),
                              expected=expected, found=first)
        data = path.read_bytes()
        offset = 0
        good_end = 0
        file_leaves: list[bytes] = []
        for line in data.split(b"\n")[:-1]:
            if _line_seq(line) != expected:
                break
            offset += len(line) + 1
            good_end = offset
            file_leaves.append(leaf_hash(line))
            last_mac = split_line(line)[0]
            expected += 1
        if good_end != len(data):
            if index != len(tail_files) - 1:
                raise ConfigError("a damaged segment is followed by another; refusing to guess",
                                  where=str(path))
            # Never destroy bytes: what is cut goes to a quarantine beside the log (outside what is verified
            # and shipped), and the boot record names it with its hash. Usually it is a torn, never
            # acknowledged write; if it was media damage, the records are still there to inspect.
            removed = data[good_end:]
            quarantine = directory.absolute().parent / f"{directory.name}-quarantine"
            quarantine.mkdir(parents=True, exist_ok=True)
            kept = quarantine / f"{path.name}.{good_end}.cut"
            kept.write_bytes(removed)
            cut = {"segment": f"{SEGMENT_DIR}/{path.name}", "offset": good_end, "bytes": len(removed),
                   "sha256": hashlib.sha256(removed).hexdigest(), "quarantine": kept.name}
            os.chmod(path, 0o644)
            with open(path, "r+b") as fh:
                fh.truncate(good_end)
                fh.flush()
                os.fsync(fh.fileno())
        if good_end == 0:
            path.unlink()  # nothing complete in it: a segment opened just before the crash
            continue
        os.chmod(path, 0o444)
        tail.append(SegmentRef(f"{SEGMENT_DIR}/{path.name}", hashlib.sha256(data[:good_end]).hexdigest(),
                               good_end, first, expected - 1))
        leaves.extend(file_leaves)
    full = tree.copy()
    for leaf in leaves:
        full.append(leaf)
    log_id = head.checkpoint.log if head else _log_id_from_segments(segments) or secrets.token_hex(16)
    return _Recovered(log_id, size, last_mac, full, tree, head, tail, leaves, cut)


def _log_id_from_segments(segments: list[tuple[int, Path]]) -> str | None:
    import json

    if not segments or segments[0][0] != 0:
        return None
    lines, _ = _read_lines(segments[0][1])
    if not lines:
        return None
    try:
        obj = json.loads(split_line(lines[0])[1])
    except (RecordError, ValueError, RecursionError):
        return None
    log_id = obj.get("log") if isinstance(obj, dict) else None
    return log_id if isinstance(log_id, str) else None
