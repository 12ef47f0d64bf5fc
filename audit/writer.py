"""The writer: the append queue and the thread that makes records durable.

`append` may be called from any thread and never waits for I/O: it encodes the record, takes the next seq and
queues it. The writer thread drains the queue, chains MACs, writes one batch per fsync (group commit, DESIGN
section 7) to the open segment and wakes the tickets of the batch. On the roller's request it seals the open
segment: closes it, makes it read-only and hands over its hash, its records' leaves and the tree at its end.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import itertools
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass, field
from typing import BinaryIO

from audit.canonical import format_ts
from audit.checkpoint import SegmentRef, segment_name
from audit.config import AuditConfig
from audit.errors import AuditError, LogClosedError
from audit.line import encode_line
from audit.merkle import CompactRange
from audit.records import chain_mac, encode_record
from audit.stores import fsync_dir

_Item = tuple[int, float, bytes, bytes | None]  # seq, append time, record bytes, new epoch key


@dataclass(frozen=True, slots=True)
class AppendTicket:
    """Handle for one appended record. `wait` returns True once its batch is fsynced."""

    seq: int
    _writer: Writer = field(repr=False, compare=False)

    def done(self) -> bool:
        return self._writer.durable > self.seq

    def wait(self, timeout: float | None = None) -> bool:
        return self._writer.wait_durable(self.seq, timeout)

    def completion(self) -> Future[bool]:
        """A future the writer thread resolves: True once the record is durable, False if the writer stopped
        before. From asyncio: `await asyncio.wrap_future(ticket.completion())`; cancelling it is harmless."""
        return self._writer.completion(self.seq)


@dataclass(frozen=True, slots=True)
class Seal:
    """Durable records not yet covered by a checkpoint: their segments and the tree after the last one."""

    segments: list[SegmentRef]
    size: int
    frontier: CompactRange
    leaves: list[bytes]


class Writer:
    """Owns seq allocation, the MAC chain, the tree over every durable record, and the segment files."""

    def __init__(self, config: AuditConfig, origin: str, *, next_seq: int, last_mac: bytes,
                 tree: CompactRange) -> None:
        self.config = config
        self.origin = origin
        self.directory = config.directory
        self._clock = config.clock

        # Shared with appending threads and the roller, under `lock`.
        self.lock = threading.Lock()
        self.work = threading.Condition(self.lock)  # the thread waits here for items or a seal request
        self.stopping = False
        self.closing = False  # from here on only the log's own records are accepted
        self._pending: list[_Item] = []
        self._next_seq = next_seq
        self.appended = 0
        self._seal_requested = False
        self._seals: list[Seal] = []  # made, not yet handed to the roller
        self._seal_done = threading.Condition(self.lock)
        self._segment_start_times: dict[int, float] = {}

        # Durability, under its own lock so waking tickets never contends with appends.
        self._durable_cond = threading.Condition(threading.Lock())
        self.durable = next_seq
        self.fatal: BaseException | None = None
        self._waiters: list[tuple[int, int, Future[bool]]] = []  # heap by seq
        self._waiter_ids = itertools.count()
        self._ended = False

        # Owned by the writer thread.
        self._mac_key: bytes | None = None
        self._prev_mac = last_mac
        self._tree = tree
        self._leaves: list[bytes] = []
        self.segment: BinaryIO | None = None
        self._seg_name = ""
        self._seg_first = 0
        self._seg_hash = hashlib.sha256()
        self._seg_bytes = 0
        self.batches = 0
        self.write_failures = 0

        self.thread = threading.Thread(target=self._run, name="warden-audit-writer", daemon=True)

    @property
    def next_seq(self) -> int:
        return self._next_seq

    # --- any thread -------------------------------------------------------------------------------------

    def append(self, kind: str, body: Mapping[str, object], key: bytes | None, *,
               internal: bool = False) -> AppendTicket:
        """Queue a record whose body already passed `check_body`; `key` starts a new MAC epoch with it."""
        with self.lock:
            if self.closing and not internal:
                raise LogClosedError("the audit log is closed", where=str(self.directory))
            if self.fatal is not None:
                raise AuditError("the audit writer stopped", where=str(self.directory), found=repr(self.fatal))
            seq = self._next_seq
            now = self._clock()
            record = encode_record(seq, format_ts(now), self.origin, kind, body)
            self._next_seq = seq + 1
            self.appended += 1
            self._pending.append((seq, now, record, key))
            if len(self._pending) == 1:
                self.work.notify()
        return AppendTicket(seq, self)

    def wait_durable(self, seq: int, timeout: float | None) -> bool:
        if self.durable > seq:
            return True
        with self._durable_cond:
            self._durable_cond.wait_for(lambda: self.durable > seq or self.fatal is not None, timeout)
        return self.durable > seq

    def completion(self, seq: int) -> Future[bool]:
        future: Future[bool] = Future()
        with self._durable_cond:
            if self.durable <= seq and not self._ended:
                heapq.heappush(self._waiters, (seq, next(self._waiter_ids), future))
                return future
            outcome = self.durable > seq
        future.set_result(outcome)
        return future

    def begin_close(self) -> bool:
        """Refuse callers' records from now on; False when the log was already closing."""
        with self.lock:
            if self.closing:
                return False
            self.closing = True
            return True

    def oldest_unanchored(self, anchored: int) -> float | None:
        """When the oldest record at or after seq `anchored` was appended (None: there is none)."""
        with self.lock:
            if self._next_seq <= anchored:
                return None
            started = self._segment_start_times.get(anchored)
            if started is None:
                later = [t for s, t in self._segment_start_times.items() if s > anchored]
                started = min(later) if later else (self._pending[0][1] if self._pending else None)
        return started

    def forget_before(self, anchored: int) -> None:
        """Drop the start times of segments wholly before seq `anchored` (anchored and mirrored)."""
        with self.lock:
            for seq in [s for s in self._segment_start_times if s < anchored]:
                del self._segment_start_times[seq]

    def request_seal(self, timeout: float) -> list[Seal]:
        """Ask the thread to seal the open segment; every seal made since the last call, oldest first.

        A request that outlasts `timeout` (a long batch and its fsync ahead of it) stays pending, and its seal
        is handed over by a later call: a seal that is dropped leaves a read-only segment no checkpoint covers,
        and every later checkpoint invalid."""
        with self.lock:
            if not self._seal_requested:
                self._seal_requested = True
                self.work.notify_all()
            self._seal_done.wait_for(lambda: not self._seal_requested, timeout)
            seals, self._seals = self._seals, []
            return seals

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float) -> None:
        """Write what is queued, then stop the thread and close the open segment (it stays unsealed)."""
        with self.lock:
            self.stopping = True
            self.work.notify_all()
        self.thread.join(timeout)
        if self.segment is not None:
            self.segment.close()
            self.segment = None

    # --- the writer thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._steps()
        except BaseException as exc:  # a bug, not I/O (I/O errors are retried): fail closed, visibly
            self.fatal = exc
            with self._durable_cond:
                self._durable_cond.notify_all()
            raise
        finally:
            self._release_waiters()

    def _steps(self) -> None:
        window = self.config.batch_window
        while True:
            with self.lock:
                while not self._pending and not self._seal_requested and not self.stopping:
                    self.work.wait()
                if self._pending and window > 0 and not self._seal_requested and not self.stopping:
                    # Group commit: let a batch gather for at most one window. Monotonic time, not the
                    # injected wall clock, so a clock step can never hold records back.
                    deadline = time.monotonic() + window
                    while len(self._pending) < self.config.max_batch:
                        left = deadline - time.monotonic()
                        if left <= 0 or not self.work.wait(left):
                            break
                batch, self._pending = self._pending, []
                seal = self._seal_requested
                stop = self.stopping
            if batch:
                self._write_batch(batch)
            if seal:
                result = self._seal_segment()
                with self.lock:
                    if result is not None:
                        self._seals.append(result)
                    self._seal_requested = False
                    self._seal_done.notify_all()
            if stop and not batch:
                with self.lock:
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
            line = encode_line(prev, record)
            lines.append(line)
            leaves.append(sha(b"\x00" + line).digest())  # merkle.leaf_hash, inlined on the hot path
        data = b"\n".join(lines) + b"\n"
        while True:
            try:
                if self.segment is None:
                    self._open_segment(batch[0][0], batch[0][1])
                assert self.segment is not None
                start = self._seg_bytes
                try:
                    self.segment.write(data)
                    self.segment.flush()
                    if self.config.fsync:
                        os.fdatasync(self.segment.fileno())
                except OSError:
                    # After a failed fsync the page cache cannot be trusted: cut back and write it again.
                    self.segment.truncate(start)
                    self.segment.seek(start)
                    raise
                break
            except OSError:
                self.write_failures += 1
                time.sleep(min(self.config.retry_max, 0.05 * (1 + self.write_failures % 20)))
        self._seg_hash.update(data)
        self._seg_bytes += len(data)
        self._mac_key = key
        self._prev_mac = prev
        tree = self._tree
        for leaf in leaves:
            tree.append(leaf)
        self._leaves.extend(leaves)
        self.batches += 1
        durable = batch[-1][0] + 1
        with self._durable_cond:
            self.durable = durable
            self._durable_cond.notify_all()
            ready = self._pop_waiters(durable) if self._waiters else None
        if ready:
            _resolve(ready, True)

    def _pop_waiters(self, durable: int) -> list[Future[bool]]:
        ready = []
        waiters = self._waiters
        while waiters and waiters[0][0] < durable:
            ready.append(heapq.heappop(waiters)[2])
        return ready

    def _release_waiters(self) -> None:
        """The thread is ending: whatever is not durable now never will be (fail closed: False)."""
        with self._durable_cond:
            self._ended = True
            ready = self._pop_waiters(self.durable)
            lost = [future for _seq, _id, future in self._waiters]
            self._waiters = []
        _resolve(ready, True)
        _resolve(lost, False)

    def _open_segment(self, first_seq: int, first_time: float) -> None:
        self._seg_name = segment_name(first_seq)
        path = self.directory / self._seg_name
        self.segment = open(path, "ab")  # noqa: SIM115 - held open across batches
        if self.config.fsync:
            fsync_dir(path.parent)
        self._seg_first = first_seq
        self._seg_hash = hashlib.sha256()
        self._seg_bytes = 0
        with self.lock:
            self._segment_start_times[first_seq] = first_time

    def _seal_segment(self) -> Seal | None:
        if self.segment is None or self._seg_bytes == 0:
            return None
        self.segment.close()
        self.segment = None
        ref = SegmentRef(self._seg_name, self._seg_hash.hexdigest(), self._seg_bytes, self._seg_first,
                         self._tree.size - 1)
        with contextlib.suppress(OSError):
            os.chmod(self.directory / self._seg_name, 0o444)  # sealed: read-only from now on
        seal = Seal([ref], self._tree.size, self._tree.copy(), self._leaves)
        self._leaves = []
        return seal


def _resolve(futures: list[Future[bool]], outcome: bool) -> None:
    for future in futures:
        # A waiter that gave up cancelled its future (asyncio.wrap_future passes the cancel on): nothing to tell.
        with contextlib.suppress(InvalidStateError):
            future.set_result(outcome)
