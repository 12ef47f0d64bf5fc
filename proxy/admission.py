"""Load shedding: at most `max_inflight` exchanges forwarded at once, at most `max_queue` waiting for a slot (in
arrival order, each for at most `queue_timeout`); beyond that the exchange is refused at once with 429.

A model server at its batch limit queues requests itself, but without bound: every exchange a sidecar forwards
holds a connection, buffers and a slot of the server's scheduler, and 300 concurrent requests were all forwarded
at once. Shedding at the edge keeps latency bounded for the admitted ones and tells the others to retry.
A slot is held until the exchange ends (its stream included): streams in flight are never cut to make room.

Pure asyncio, no mitmproxy: the stage (proxy/stages/admission.py) is the shell.
"""

from __future__ import annotations

import asyncio
from collections import deque
from enum import Enum


class Entry(Enum):
    ADMITTED = "admitted"  # a slot is held now
    QUEUE = "queue"  # no slot, but room to wait: `await gate.wait()`
    FULL = "full"  # neither: refuse


class AdmissionGate:
    def __init__(self, max_inflight: int, max_queue: int, queue_timeout: float) -> None:
        self.max_inflight = max_inflight  # 0: no limit
        self.max_queue = max_queue
        self.queue_timeout = queue_timeout
        self.inflight = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    def enter(self) -> Entry:
        """Take a slot if one is free (synchronous: the common case costs no task switch)."""
        if not self.max_inflight or (self.inflight < self.max_inflight and not self._waiters):
            self.inflight += 1
            return Entry.ADMITTED
        return Entry.QUEUE if len(self._waiters) < self.max_queue else Entry.FULL

    async def wait(self) -> bool:
        """Wait in line for a slot (after `enter` said QUEUE): True when one was handed over, False when the
        queue timeout passed first."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(self.queue_timeout):
                await waiter
        except TimeoutError:
            if waiter.done() and not waiter.cancelled():
                self.leave()  # handed a slot in the same instant the time ran out: pass it on
            else:
                self._waiters.remove(waiter)
            return False
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.leave()
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise
        return True

    def leave(self) -> None:
        """Give a slot back: straight to the longest waiter, if any (the count of slots held is unchanged)."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return
        self.inflight -= 1
