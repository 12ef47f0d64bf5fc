"""The writer (audit/writer.py): a ticket's completion is resolved by the writer thread, never polled."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from pathlib import Path

import pytest

from audit.errors import AuditError
from audit.log import AuditLog
from audit.merkle import CompactRange
from audit.records import GENESIS_MAC
from audit.writer import Writer
from tests.audit.conftest import config, exchange


def test_a_completion_is_resolved_by_the_writer_thread_after_the_fsync(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b", batch_window=0.05))
    resolved_in: list[str] = []
    ticket = log.append("exchange", exchange(1))
    future = ticket.completion()
    future.add_done_callback(lambda _f: resolved_in.append(threading.current_thread().name))
    assert future.result(5) is True and ticket.done()
    assert resolved_in == ["warden-audit-writer"]
    # Already durable: resolved at once, in the caller's thread.
    again = ticket.completion()
    assert again.done() and again.result() is True
    assert log.close(10)


def test_a_cancelled_completion_is_ignored(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b", batch_window=0.2))
    ticket = log.append("exchange", exchange(1))
    future = ticket.completion()
    assert future.cancel()  # what asyncio.wait_for does to a wrapped future on timeout
    assert ticket.wait(5) and log.healthy()
    assert log.append("exchange", exchange(2)).completion().result(5) is True
    assert log.close(10)


def test_a_writer_that_stops_on_a_fault_resolves_every_waiting_completion_false(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    raised: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", raised.append)  # the writer re-raises: a fault is visible
    (tmp_path / "log" / "segments").mkdir(parents=True)
    writer = Writer(config(tmp_path / "log", "b"), "test/ns/pod-0/b", next_seq=0, last_mac=GENESIS_MAC,
                    tree=CompactRange())
    # No epoch record first, so no chain key: the fault `AuditLog.open` rules out, and the writer fails closed.
    ticket = writer.append("exchange", exchange(0), None)
    waiting: Future[bool] = ticket.completion()
    writer.start()
    assert waiting.result(5) is False
    assert isinstance(writer.fatal, AuditError) and not ticket.wait(0)
    assert ticket.completion().result(0) is False  # asked after the fault
    writer.thread.join(5)
    assert [type(args.exc_value) for args in raised] == [AuditError]
