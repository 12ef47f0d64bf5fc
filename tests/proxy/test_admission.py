from __future__ import annotations

import asyncio

from proxy.admission import AdmissionGate, Entry


def test_slots_then_a_bounded_queue_then_full() -> None:
    gate = AdmissionGate(max_inflight=2, max_queue=1, queue_timeout=1.0)
    assert [gate.enter(), gate.enter()] == [Entry.ADMITTED, Entry.ADMITTED]
    assert gate.enter() is Entry.QUEUE

    async def scenario() -> list[object]:
        waiting = asyncio.ensure_future(gate.wait())
        await asyncio.sleep(0)
        assert gate.waiting == 1
        full = gate.enter()  # the queue holds one
        gate.leave()  # a slot handed straight to the waiter
        return [full, await waiting, gate.inflight, gate.waiting]

    assert asyncio.run(scenario()) == [Entry.FULL, True, 2, 0]


def test_a_queued_exchange_times_out_and_leaves_no_trace() -> None:
    gate = AdmissionGate(max_inflight=1, max_queue=4, queue_timeout=0.05)
    assert gate.enter() is Entry.ADMITTED

    async def scenario() -> bool:
        return await gate.wait()

    assert asyncio.run(scenario()) is False
    assert gate.waiting == 0
    gate.leave()
    assert gate.inflight == 0
    assert gate.enter() is Entry.ADMITTED


def test_arrivals_do_not_jump_the_queue() -> None:
    """A free slot goes to the longest waiter, not to whoever calls `enter` first after it is freed."""
    gate = AdmissionGate(max_inflight=1, max_queue=2, queue_timeout=1.0)
    assert gate.enter() is Entry.ADMITTED

    async def scenario() -> list[object]:
        order: list[str] = []

        async def wait(name: str) -> None:
            if await gate.wait():
                order.append(name)
                await asyncio.sleep(0.01)
                gate.leave()

        first = asyncio.ensure_future(wait("first"))
        await asyncio.sleep(0)
        second = asyncio.ensure_future(wait("second"))
        await asyncio.sleep(0)
        gate.leave()
        late = gate.enter()  # a slot was handed over, not freed: a newcomer queues
        await asyncio.gather(first, second)
        return [late, order]

    assert asyncio.run(scenario()) == [Entry.QUEUE, ["first", "second"]]


def test_a_cancelled_waiter_gives_its_slot_on() -> None:
    gate = AdmissionGate(max_inflight=1, max_queue=2, queue_timeout=1.0)
    assert gate.enter() is Entry.ADMITTED

    async def scenario() -> bool:
        doomed = asyncio.ensure_future(gate.wait())
        await asyncio.sleep(0)
        doomed.cancel()
        await asyncio.sleep(0)
        survivor = asyncio.ensure_future(gate.wait())
        await asyncio.sleep(0)
        gate.leave()
        return await survivor

    assert asyncio.run(scenario()) is True
    assert gate.inflight == 1 and gate.waiting == 0


def test_zero_means_no_limit() -> None:
    gate = AdmissionGate(max_inflight=0, max_queue=0, queue_timeout=0.0)
    assert all(gate.enter() is Entry.ADMITTED for _ in range(1000))
