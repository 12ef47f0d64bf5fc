"""The roller: when to checkpoint, epoch keys, signing, and the mirror to the configured store.

Its thread decides when to checkpoint (at most `checkpoint_interval` after growth, a heartbeat record after
`heartbeat_interval` idle, a new epoch key every `epoch_interval`), has the writer seal the open segment, signs
the checkpoint, stores it beside the segments and mirrors both to the configured store, retrying with backoff.
A failure never drops records: unanchored seals stay pending and the next successful checkpoint covers them all.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Mapping

from audit.canonical import format_ts
from audit.checkpoint import CHECKPOINT_DIR, Checkpoint, SignedCheckpoint, checkpoint_name, parse_checkpoint
from audit.config import AuditConfig
from audit.errors import AuditError, KeyUnavailableError
from audit.keys import KeyProvider
from audit.merkle import CompactRange, consistency_proof, frontier_range_hash
from audit.records import Kind, check_body
from audit.signers import Signer
from audit.stores import DirectoryStore
from audit.writer import Seal, Writer


class Roller:
    """Owns the checkpoint chain (head, anchored tree), the epoch schedule and the mirror backlog."""

    def __init__(self, config: AuditConfig, writer: Writer, keys: KeyProvider, signer: Signer, *, log_id: str,
                 origin: str, head: SignedCheckpoint | None, head_tree: CompactRange) -> None:
        self.config = config
        self.directory = config.directory
        self.log_id = log_id
        self.origin = origin
        self._writer = writer
        self._keys = keys
        self._signer = signer
        self._clock = config.clock
        self._local = DirectoryStore(config.directory)

        self.head = head.checkpoint if head else None
        self._head_hash = head.checkpoint.body_hash() if head else None
        self._anchored_tree = head_tree.copy()
        self._pending_seals: list[Seal] = []
        self._mirror_backlog: list[str] = []
        self.mirrored_size = head.checkpoint.size if head else 0
        self.anchored_size = head.checkpoint.size if head else 0
        self._last_anchor_time = self._clock()
        self._next_attempt = 0.0
        self._backoff = config.retry_initial
        self._epoch = -1
        self._epoch_started = 0.0
        self._heartbeat_due = False
        self._anchor_cost = 0.0
        self._force = False

        self.checkpoints = 0
        self.sign_failures = 0
        self.store_failures = 0
        self.key_failures = 0
        self.stopping = False
        self.wake = threading.Event()
        self.thread = threading.Thread(target=self._run, name="warden-audit-roller", daemon=True)

    @property
    def anchored_through(self) -> int:
        """Records covered by a checkpoint that is stored everywhere it must be (locally, and mirrored)."""
        return min(self.anchored_size, self.mirrored_size) if self.config.store else self.anchored_size

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float) -> None:
        self.stopping = True
        self.wake.set()
        self.thread.join(timeout)

    def force(self) -> None:
        """Checkpoint at the next tick, whatever the schedule says."""
        self._force = True
        self.wake.set()

    def add_seal(self, seal: Seal) -> None:
        self._pending_seals.append(seal)

    def start_epoch(self, *, boot: bool, extra: Mapping[str, object] | None = None) -> None:
        """Append an epoch record: a fresh chain key K_epoch, stored wrapped (DESIGN section 7)."""
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
        self._writer.append(Kind.EPOCH_START, body, epoch_key.key, internal=True)
        self._epoch_started = self._clock()

    def drain_mirror(self, deadline: float) -> bool:
        """At close, with the thread gone: mirror the backlog, still retrying until `deadline`. True if done."""
        while self._mirror_backlog and time.monotonic() < deadline:
            self._next_attempt = 0.0
            self._mirror()
            if self._mirror_backlog:
                time.sleep(min(self._backoff, max(0.0, deadline - time.monotonic())))
        return not self._mirror_backlog

    # --- the roller thread -------------------------------------------------------------------------------

    def _run(self) -> None:
        cfg = self.config
        while not self.stopping:
            self.wake.wait(cfg.tick)
            self.wake.clear()
            if self.stopping:
                break
            try:
                self._roll_once()
            except Exception:  # the roller must survive anything; failures are counted in anchor()
                self.sign_failures += 1
                time.sleep(cfg.tick)

    def _roll_once(self) -> None:
        cfg = self.config
        now = self._clock()
        if now < self._last_anchor_time or now < self._epoch_started:
            # The wall clock stepped back: restart the schedules from now rather than stall them.
            self._last_anchor_time = min(self._last_anchor_time, now - cfg.checkpoint_interval)
            self._epoch_started = min(self._epoch_started, now)
        force, self._force = self._force, False
        writer = self._writer
        if self._mirror_backlog and now >= self._next_attempt:
            self._mirror()
        if not writer.closing and now - self._epoch_started >= cfg.epoch_interval:
            try:
                self.start_epoch(boot=False)
            except KeyUnavailableError:
                self.key_failures += 1
                self._epoch -= 1
                self._epoch_started = now - cfg.epoch_interval + cfg.retry_max
        grown = writer.next_seq > self.anchored_size or bool(self._pending_seals)
        if not grown and not writer.closing and now - self._last_anchor_time >= cfg.heartbeat_interval:
            writer.append(Kind.HEARTBEAT, {"anchored": self.anchored_size}, None, internal=True)
            self._heartbeat_due = True
            grown = True
        # Start early by one tick plus what the last checkpoint took, so the anchor lands within the interval.
        due = force or now - self._last_anchor_time + cfg.tick + self._anchor_cost >= cfg.checkpoint_interval
        if grown and due and (force or now >= self._next_attempt):
            reason = "shutdown" if writer.closing else "heartbeat" if self._heartbeat_due else "interval"
            if force and not writer.closing:
                reason = "manual"
            if self.anchor(reason):
                self._heartbeat_due = False

    # --- checkpoints and the mirror ------------------------------------------------------------------------

    def anchor(self, reason: str) -> bool:
        """Seal (unless earlier seals still wait), sign, store locally, mirror. False on failure."""
        started = time.monotonic()
        try:
            return self._anchor_steps(reason)
        finally:
            self._anchor_cost = min(1.0, time.monotonic() - started)

    def _anchor_steps(self, reason: str) -> bool:
        cfg = self.config
        if not self._pending_seals and self._writer.thread.is_alive():
            self._pending_seals.extend(self._writer.request_seal(timeout=max(1.0, cfg.tick * 20)))
        if not self._pending_seals:
            return True
        last = self._pending_seals[-1]
        base = self._anchored_tree
        leaves = [leaf for seal in self._pending_seals for leaf in seal.leaves]
        head = self.head
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
            self.sign_failures += 1
            self._retry_later()
            return False
        signed = SignedCheckpoint(checkpoint, signature, last.frontier.frontier)
        name = checkpoint_name(checkpoint.n)
        try:
            self._local.put(name, signed.to_bytes())
        except AuditError:
            self.store_failures += 1
            self._retry_later()
            return False
        self.head = checkpoint
        self._head_hash = hashlib.sha256(body).hexdigest()
        self._anchored_tree = last.frontier.copy()
        self.anchored_size = last.size
        if self.config.store is None:
            self.mirrored_size = last.size
        self._pending_seals = []
        self.checkpoints += 1
        self._last_anchor_time = self._clock()
        self._backoff = cfg.retry_initial
        self._next_attempt = 0.0
        self._writer.forget_before(min(self.anchored_size, self.mirrored_size))
        if self.config.store is not None:
            self._mirror_backlog.extend([s.name for s in checkpoint.segments] + [name])
            self._mirror()
        return True

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
                self.store_failures += 1
                self._retry_later()
                return
            self._mirror_backlog.pop(0)
            if name.startswith(CHECKPOINT_DIR + "/"):
                self.mirrored_size = parse_checkpoint((self.directory / name).read_bytes(),
                                                      name).checkpoint.size
                self._writer.forget_before(min(self.anchored_size, self.mirrored_size))

    def queue_unmirrored(self) -> None:
        """After a restart, re-queue the checkpoints (and their segments) the store does not have yet."""
        store = self.config.store
        if store is None or self.head is None:
            return
        exists = store.exists
        names: list[str] = []
        n = self.head.n
        while n >= 0 and not exists(checkpoint_name(n)):
            cp = parse_checkpoint((self.directory / checkpoint_name(n)).read_bytes(), checkpoint_name(n))
            names[:0] = [s.name for s in cp.checkpoint.segments if not exists(s.name)] + [checkpoint_name(n)]
            n -= 1
        if names:
            self.mirrored_size = 0 if n < 0 else parse_checkpoint(
                (self.directory / checkpoint_name(n)).read_bytes(), "").checkpoint.size
            self._mirror_backlog.extend(names)
            self._mirror()
