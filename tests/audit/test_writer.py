"""The writer (audit/writer.py): a ticket's completion is resolved by the writer thread, never polled; a seal
is never lost, however long the batch ahead of it takes."""

from __future__ import annotations

import os
import threading
import time
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


def test_a_seal_that_outlasts_the_rollers_wait_is_handed_over_by_the_next_request(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The roller waits at most a second for a seal. When a big batch's fsync made it wait longer, the seal
    finished later and the next request overwrote it: its segment was read-only and in no checkpoint."""
    (tmp_path / "log" / "segments").mkdir(parents=True)
    writer = Writer(config(tmp_path / "log", "b"), "test/ns/pod-0/b", next_seq=0, last_mac=GENESIS_MAC,
                    tree=CompactRange())
    writer.start()
    writer.append("epoch_start", {}, b"k" * 32, internal=True)
    assert writer.wait_durable(0, 5)
    syncing, release = threading.Event(), threading.Event()
    fdatasync = os.fdatasync

    def slow_fdatasync(fd: int) -> None:
        syncing.set()
        release.wait(5)
        fdatasync(fd)

    monkeypatch.setattr(os, "fdatasync", slow_fdatasync)
    writer.append("exchange", exchange(1), None)
    assert syncing.wait(5)
    assert writer.request_seal(0.05) == []  # the roller gives up waiting; its request stays pending
    release.set()
    segment = tmp_path / "log" / "segments" / "00000000000000000000.jsonl"
    deadline = time.monotonic() + 5
    while segment.stat().st_mode & 0o222 and time.monotonic() < deadline:  # sealed: read-only
        time.sleep(0.005)
    time.sleep(0.05)
    seals = writer.request_seal(1.0)
    assert [(s.segments[0].name, s.size) for s in seals] == [("segments/00000000000000000000.jsonl", 2)]
    writer.stop(5)
