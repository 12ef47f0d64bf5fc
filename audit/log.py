"""The audit log: one object the proxy holds. Append from any thread; records are group-committed to segment
files and anchored by signed checkpoints.

The parts, each its own module:

- `audit.config`: `Origin`, `AuditConfig`, `aws_config`;
- `audit.recovery`: on open, cut a torn tail, find where the log stands, link the new boot to the last
  checkpoint;
- `audit.writer`: the append queue and its thread (group commit, MAC chain, segments, tickets);
- `audit.roller`: its thread (checkpoint schedule, epoch keys, heartbeats, signing, mirror).

Layout of `directory` (also the default store): `segments/<first seq>.jsonl` and `checkpoints/<n>.json`.
A segment holds exactly the records sealed by one checkpoint (the last one is the open, unanchored tail).
"""

from __future__ import annotations

import hashlib
import hmac
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import BinaryIO

from audit.checkpoint import CHECKPOINT_DIR, SEGMENT_DIR, Checkpoint
from audit.config import KEY_DIR_NAME, AuditConfig, Origin, aws_config
from audit.errors import AuditError, ConfigError, RecordError
from audit.keys import DIGEST_KEY_FILE, KeyProvider, LocalKeyProvider, load_or_create_hex_key
from audit.records import LIFECYCLE_KINDS, Kind, check_body, check_kind, digest_hex
from audit.recovery import Recovered, boot_link, recover
from audit.roller import Roller
from audit.signers import SIGNING_KEY_FILE, LocalSigner, Signer
from audit.writer import AppendTicket, Seal, Writer

__all__ = ["KEY_DIR_NAME", "AppendTicket", "AuditConfig", "AuditLog", "AuditStats", "Origin", "aws_config"]


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


class AuditLog:
    """The tamper-evident audit log. Build with `AuditLog.open(config)`; `close()` at shutdown."""

    def __init__(self, config: AuditConfig, key_provider: KeyProvider, signer: Signer, digest_key: bytes,
                 recovered: Recovered) -> None:
        self.config = config
        self.origin = str(config.origin)
        self.directory = config.directory
        self.log_id = recovered.log_id
        self._signer = signer
        self._digest_key = digest_key
        self._clock = config.clock
        self._closed = False
        self._writer = Writer(config, self.origin, next_seq=recovered.next_seq, last_mac=recovered.last_mac,
                              tree=recovered.frontier)
        head = recovered.head
        self._roller = Roller(config, self._writer, key_provider, signer, log_id=self.log_id, origin=self.origin,
                              head=head, head_tree=recovered.head_tree)

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
        recovered = recover(config.directory)
        log = cls(config, provider, signer, digest_key, recovered)
        roller = log._roller
        if recovered.tail:
            roller.add_seal(Seal(list(recovered.tail), recovered.frontier.size, recovered.frontier.copy(),
                                 recovered.tail_leaves))
            if not roller.anchor("recovery"):
                raise AuditError("cannot anchor the previous boot's unanchored records",
                                 where=str(config.directory))
        roller.queue_unmirrored()
        roller.start_epoch(boot=True, extra={"prev_checkpoint": boot_link(roller.head), "recovered": recovered.cut})
        log._writer.start()
        roller.start()
        return log

    # --- public API -------------------------------------------------------------------------------------

    def append(self, kind: str, body: Mapping[str, object]) -> AppendTicket:
        """Queue one record; returns at once (thread-safe, never waits for I/O). Raises RecordError for a
        body that cannot be written canonically (floats, reserved keys) and LogClosedError after close."""
        check_kind(kind)
        if kind in LIFECYCLE_KINDS:
            raise RecordError("lifecycle record kinds are written by the log itself", found=kind, where="kind")
        check_body(body)
        return self._writer.append(kind, body, None)

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
        started = self._writer.oldest_unanchored(self._roller.anchored_through)
        return 0.0 if started is None else max(0.0, self._clock() - started)

    def healthy(self) -> bool:
        """True while records can be made durable and anchored: both threads run, the writer has not failed,
        and the log is open. For readiness (audit fails closed)."""
        writer = self._writer
        return (writer.fatal is None and not writer.closing and writer.thread.is_alive()
                and self._roller.thread.is_alive())

    def stats(self) -> AuditStats:
        writer, roller = self._writer, self._roller
        return AuditStats(writer.appended, roller.checkpoints, writer.batches, writer.write_failures,
                          roller.sign_failures, roller.store_failures, roller.key_failures, writer.next_seq,
                          writer.durable, roller.anchored_size, self.anchor_lag_seconds())

    @property
    def head(self) -> Checkpoint | None:
        """The newest stored checkpoint."""
        return self._roller.head

    @property
    def public_key_der(self) -> bytes:
        return self._signer.public_key_der

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything appended so far is durable."""
        with self._writer.lock:
            last = self._writer.next_seq - 1
        return last < 0 or self._writer.wait_durable(last, timeout)

    def checkpoint_now(self, timeout: float = 10.0) -> bool:
        """Seal and anchor everything durable now (from any thread but the roller); True on success."""
        deadline = time.monotonic() + timeout
        if not self.flush(timeout):
            return False
        target = self._writer.durable
        roller = self._roller
        next_force = 0.0
        while time.monotonic() < deadline:
            if roller.anchored_size >= target:
                return True
            if time.monotonic() >= next_force:
                # Re-arm: a failed attempt (signer or store down) is retried until the deadline.
                roller.force()
                next_force = time.monotonic() + max(0.1, self.config.retry_initial)
            time.sleep(0.005)
        return roller.anchored_size >= target

    def close(self, timeout: float = 10.0) -> bool:
        """Append the shutdown record, write the final checkpoint, stop both threads. True when every record
        is durable and anchored; False leaves them durable for the next boot to anchor."""
        writer, roller = self._writer, self._roller
        if not writer.begin_close():
            return self._closed
        writer.append(Kind.SHUTDOWN, {"records": writer.next_seq}, None, internal=True)
        deadline = time.monotonic() + timeout
        ok = self.checkpoint_now(timeout)
        roller.stop(max(0.0, deadline - time.monotonic()))
        mirrored = roller.drain_mirror(deadline)  # the roller is gone: mirror here, until the deadline
        ok = ok and mirrored
        writer.stop(timeout)
        self._closed = ok
        return ok and roller.anchored_size == writer.next_seq

    # --- what the crash tests reach for --------------------------------------------------------------------
    # tests/audit/conftest.py `abandon` stops both threads by hand, skipping the shutdown record and the final
    # checkpoint (a crash, as far as the disk can tell), through the names these had before the writer and the
    # roller became objects of their own.

    @property
    def _lock(self) -> threading.Lock:
        return self._writer.lock

    @property
    def _work(self) -> threading.Condition:
        return self._writer.work

    @property
    def _writer_thread(self) -> threading.Thread:
        return self._writer.thread

    @property
    def _roller_thread(self) -> threading.Thread:
        return self._roller.thread

    @property
    def _roller_wake(self) -> threading.Event:
        return self._roller.wake

    @property
    def _stop_writer(self) -> bool:
        return self._writer.stopping

    @_stop_writer.setter
    def _stop_writer(self, value: bool) -> None:
        self._writer.stopping = value

    @property
    def _stop_roller(self) -> bool:
        return self._roller.stopping

    @_stop_roller.setter
    def _stop_roller(self, value: bool) -> None:
        self._roller.stopping = value

    @property
    def _seg_file(self) -> BinaryIO | None:
        return self._writer.segment

    @_seg_file.setter
    def _seg_file(self, value: BinaryIO | None) -> None:
        self._writer.segment = value
