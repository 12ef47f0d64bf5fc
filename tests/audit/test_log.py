"""The writer: appends, tickets, group commit, checkpoints on schedule, recovery, failures that lose nothing."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from audit.checkpoint import parse_checkpoint
from audit.errors import ConfigError, KeyUnavailableError, LogClosedError, RecordError, SignerError, StoreError
from audit.keys import EpochKey
from audit.log import AuditLog, Origin
from audit.records import ExchangeRecord, split_line
from audit.signers import KeyRing, LocalSigner
from audit.stores import DirectorySource, DirectoryStore
from audit.verify import Outcome, verify
from tests.audit.conftest import Built, build, config, exchange, run_verify, writable


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def eventually(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.01)


def records(directory: Path) -> list[dict[str, object]]:
    out = []
    for seg in sorted((directory / "segments").iterdir()):
        for line in seg.read_bytes().split(b"\n")[:-1]:
            out.append(json.loads(split_line(line)[1]))
    return out


def built_of(directory: Path) -> Built:
    return Built(directory.parent, directory, directory.parent / "keys")


def test_append_is_durable_and_keyed(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b"))
    ticket = log.append("exchange", exchange(1))
    assert ticket.seq == 1  # seq 0 is the boot's epoch record
    assert ticket.wait(5) and ticket.done()
    digest = log.digest(b"110101199003074578")
    assert len(digest) == 64 and digest != hashlib.sha256(b"110101199003074578").hexdigest()
    assert digest == log.digest(b"110101199003074578")
    stream = log.digest_stream()
    stream.update(b"110101")
    stream.update(b"199003074578")
    assert stream.hexdigest() == digest
    assert (tmp_path / "keys" / "digest.key").read_text().strip() == log.digest_key.hex()
    assert log.close(10)
    assert (tmp_path / "keys" / "signing.pub.pem").is_file()
    assert [r["kind"] for r in records(tmp_path / "log")] == ["epoch_start", "exchange", "shutdown"]


@pytest.mark.parametrize("body", [{"latency": 1.5}, {"seq": 3}, {"Bad-Key": 1}, {"x": object()},
                                  {"x": 2**60}, {"x": "\ud800"}])
def test_bad_bodies_are_refused_without_using_a_seq(tmp_path: Path, body: Mapping[str, object]) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b"))
    with pytest.raises(RecordError):
        log.append("exchange", body)
    with pytest.raises(RecordError):
        log.append("heartbeat", {})
    assert log.append("exchange", {"ok": True}).seq == 1
    assert log.close(10)


def test_close_writes_shutdown_and_final_checkpoint(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b"))
    for i in range(10):
        log.append("exchange", exchange(i))
    assert log.close(10)
    with pytest.raises(LogClosedError):
        log.append("exchange", exchange(0))
    head = log.head
    assert head is not None and head.size == 12 and head.reason == "shutdown"
    assert log.stats().anchor_lag_seconds == 0.0
    assert run_verify(built_of(tmp_path / "log")).outcome == Outcome.VALID


def test_reboot_links_to_previous_checkpoint(tmp_path: Path) -> None:
    built = build(tmp_path, boots=2, checkpoints_per_boot=1)
    recs = records(built.directory)
    boots = [r for r in recs if r["kind"] == "epoch_start" and r["boot"]]
    assert boots[0]["prev_checkpoint"] is None
    link = boots[1]["prev_checkpoint"]
    assert isinstance(link, dict)
    cp = parse_checkpoint((built.directory / "checkpoints" / f"{link['n']:012d}.json").read_bytes(), "x")
    assert link["hash"] == cp.checkpoint.body_hash() and cp.checkpoint.size == boots[1]["seq"]
    assert [r["seq"] for r in recs] == list(range(len(recs)))


def test_crash_tail_is_cut_and_anchored_on_restart(tmp_path: Path) -> None:
    built = build(tmp_path, boots=1, close_last=False)
    tail = built.segments()[-1]
    writable(tail).write_bytes(tail.read_bytes() + b'{"_mac":"12ab')
    log = AuditLog.open(config(built.directory, "after-crash"))
    assert log.head is not None and log.head.reason == "recovery"
    assert log.close(10)
    recs = records(built.directory)
    boot = [r for r in recs if r["kind"] == "epoch_start"][-1]
    torn = b'{"_mac":"12ab'
    offset = len(tail.read_bytes())
    assert boot["recovered"] == {"segment": f"segments/{tail.name}", "offset": offset, "bytes": len(torn),
                                 "sha256": hashlib.sha256(torn).hexdigest(),
                                 "quarantine": f"{tail.name}.{offset}.cut"}
    assert (tmp_path / "log-quarantine" / f"{tail.name}.{offset}.cut").read_bytes() == torn
    report = run_verify(built)
    assert report.outcome == Outcome.VALID and report.problems == ()


def test_unanchored_tail_of_a_killed_boot_is_anchored_by_the_next(tmp_path: Path) -> None:
    built = build(tmp_path, boots=1, close_last=False)
    assert "UNANCHORED_TAIL" in run_verify(built).codes()
    log = AuditLog.open(config(built.directory, "next"))
    assert log.close(10)
    assert run_verify(built).problems == ()


def test_checkpoint_interval_heartbeat_and_epochs_follow_the_clock(tmp_path: Path) -> None:
    clock = FakeClock()
    log = AuditLog.open(config(tmp_path / "log", "b", clock=clock, checkpoint_interval=5.0,
                               heartbeat_interval=60.0, epoch_interval=600.0))
    log.append("exchange", exchange(0)).wait(5)
    time.sleep(0.1)
    assert log.head is None and log.anchor_lag_seconds() == 0.0  # the clock has not moved
    clock.advance(2)
    assert log.anchor_lag_seconds() == pytest.approx(2.0)
    clock.advance(3)
    eventually(lambda: log.head is not None)
    assert log.head is not None and log.head.reason == "interval" and log.head.size == 2
    assert log.anchor_lag_seconds() == 0.0
    clock.advance(61)
    eventually(lambda: log.head is not None and log.head.n == 1)
    assert log.head is not None and log.head.reason == "heartbeat"
    clock.advance(600)
    eventually(lambda: log.head is not None and log.head.n >= 2)
    assert log.close(10)
    kinds = [(r["kind"], r.get("boot")) for r in records(tmp_path / "log")]
    assert ("heartbeat", None) in kinds and ("epoch_start", False) in kinds
    report = run_verify(built_of(tmp_path / "log"))
    assert report.outcome == Outcome.VALID and report.epochs == 2 and report.macs_checked == report.records


class FlakySigner:
    def __init__(self, real: LocalSigner, failures: int) -> None:
        self.real = real
        self.failures = failures

    @property
    def fingerprint(self) -> str:
        return self.real.fingerprint

    @property
    def public_key_der(self) -> bytes:
        return self.real.public_key_der

    def sign(self, message: bytes) -> bytes:
        if self.failures > 0:
            self.failures -= 1
            raise SignerError("signer down (test)")
        return self.real.sign(message)


def test_sign_failures_are_retried_and_lose_nothing(tmp_path: Path) -> None:
    real = LocalSigner.from_file(tmp_path / "keys" / "signing.pem", create=True)
    signer = FlakySigner(real, failures=3)
    log = AuditLog.open(config(tmp_path / "log", "b", signer=signer, checkpoint_interval=0.05,
                               retry_initial=0.01, retry_max=0.05))
    tickets = [log.append("exchange", exchange(i)) for i in range(50)]
    assert all(t.wait(5) for t in tickets)
    assert log.close(10)
    stats = log.stats()
    assert stats.sign_failures_total == 3 and stats.size_anchored == stats.size_appended == stats.records_total == 52
    assert run_verify(built_of(tmp_path / "log")).problems == ()


class FlakyStore:
    def __init__(self, inner: DirectoryStore, failures: int) -> None:
        self.inner = inner
        self.failures = failures

    def put(self, name: str, data: bytes) -> None:
        if self.failures > 0:
            self.failures -= 1
            raise StoreError("store down (test)")
        self.inner.put(name, data)

    def exists(self, name: str) -> bool:
        return self.inner.exists(name)

    def describe(self) -> str:
        return self.inner.describe()


def test_mirror_failures_are_retried_and_the_mirror_verifies(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    store = FlakyStore(DirectoryStore(mirror), failures=2)
    log = AuditLog.open(config(tmp_path / "log", "b", store=store, checkpoint_interval=0.05,
                               retry_initial=0.01, retry_max=0.05))
    for i in range(20):
        log.append("exchange", exchange(i))
    assert log.close(10)
    eventually(lambda: store.failures == 0)
    assert log.stats().store_failures_total == 2
    built = Built(tmp_path, mirror, tmp_path / "keys")
    assert run_verify(built).problems == ()


def test_concurrent_appends_get_unique_contiguous_seqs(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b", checkpoint_interval=0.05))
    seqs: list[int] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        mine = [log.append("exchange", exchange(k * 1000 + i)).seq for i in range(300)]
        with lock:
            seqs.extend(mine)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seqs) == list(range(1, 1201))
    assert log.close(10)
    report = run_verify(built_of(tmp_path / "log"))
    assert report.outcome == Outcome.VALID and report.records == 1202 and report.checkpoints >= 1


class BrokenKeys:
    name = "local"

    def new_key(self, context: Mapping[str, str]) -> EpochKey:
        raise KeyUnavailableError("no KMS (test)")

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        raise KeyUnavailableError("no KMS (test)")


def test_unusable_key_provider_fails_closed(tmp_path: Path) -> None:
    with pytest.raises(KeyUnavailableError):
        AuditLog.open(config(tmp_path / "log", "b", key_provider=BrokenKeys()))


def test_exchange_record_body(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b"))
    rec = ExchangeRecord(request_id="r1", route="chat", status=200, latency_ms=31, model="qwen",
                         input_digest=log.digest(b"in"), verdicts={"pii": "mask", "semantic": "timeout"},
                         findings={"cn_mobile": 2})
    log.append("exchange", rec.to_body()).wait(5)
    with pytest.raises(RecordError):
        ExchangeRecord(request_id="r", route="chat", status=200, latency_ms=1, verdicts={"x": "ok"}).to_body()
    assert log.close(10)
    stored = records(tmp_path / "log")[1]
    assert stored["verdicts"] == {"pii": "mask", "semantic": "timeout"}
    assert stored["exchange"]["model"] == "qwen"  # type: ignore[index]


def test_origin_rejects_slashes() -> None:
    with pytest.raises(ConfigError):
        Origin("a/b", "ns", "pod", "boot")


def test_verify_reads_only_what_the_source_lists(tmp_path: Path) -> None:
    log = AuditLog.open(config(tmp_path / "log", "b"))
    assert log.close(10)
    report = verify(DirectorySource(tmp_path / "log"), _ring(tmp_path))
    assert report.outcome == Outcome.VALID


def _ring(root: Path) -> KeyRing:
    ring = KeyRing()
    ring.add_bytes((root / "keys" / "signing.pub.pem").read_bytes())
    return ring


def test_health_and_mirror_backlog_after_restart(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    log = AuditLog.open(config(tmp_path / "log", "one", store=DirectoryStore(mirror)))
    assert log.healthy()
    log.append("exchange", exchange(0))
    assert log.close(10)
    assert not log.healthy()
    # The mirror lost its newest objects (say the process died before uploading): the next boot re-sends them.
    newest = sorted((mirror / "checkpoints").iterdir())[-1]
    newest.unlink()
    log = AuditLog.open(config(tmp_path / "log", "two", store=DirectoryStore(mirror)))
    assert newest.is_file()
    assert log.close(10)
    assert run_verify(Built(tmp_path, mirror, tmp_path / "keys")).problems == ()


def test_wall_clock_stepping_back_does_not_stall_anything(tmp_path: Path) -> None:
    clock = FakeClock()
    log = AuditLog.open(config(tmp_path / "log", "b", clock=clock, checkpoint_interval=5.0))
    clock.advance(-3600)
    ticket = log.append("exchange", exchange(0))
    assert ticket.wait(5)
    eventually(lambda: log.head is not None, timeout=5)
    assert log.close(10)
    assert run_verify(built_of(tmp_path / "log")).outcome == Outcome.VALID


def test_keys_inside_the_log_directory_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        AuditLog.open(config(tmp_path / "log", "b", key_dir=tmp_path / "log" / "keys"))


def test_origin_from_pod_environment() -> None:
    origin = Origin.from_env({"WARDEN_CLUSTER": "prod-eu", "POD_NAMESPACE": "llm", "POD_NAME": "vllm-0"})
    assert str(origin).startswith("prod-eu/llm/vllm-0/") and len(origin.boot_id) == 16
    assert Origin.from_env({}).cluster == "local"
    assert Origin.from_env({}).boot_id != Origin.from_env({}).boot_id


def test_a_seal_that_times_out_anchors_nothing_and_the_next_checkpoint_covers_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Roller.anchor` returns True when the writer has not finished the seal it asked for within its wait (the
    request stays pending). Nothing takes that True for coverage: the head, `anchored_size` and the stats stay
    where they were, `checkpoint_now` and `close` look at `anchored_size`, and the roller's own tick only
    clears the heartbeat flag and asks again, getting the pending seal."""
    directory = tmp_path / "log"
    log = AuditLog.open(config(directory, "b"))
    assert log.checkpoint_now(10)
    head = log.head
    assert head is not None
    syncing, release = threading.Event(), threading.Event()
    fdatasync = os.fdatasync

    def slow_fdatasync(fd: int) -> None:
        syncing.set()
        release.wait(10)
        fdatasync(fd)

    monkeypatch.setattr(os, "fdatasync", slow_fdatasync)
    log.append("exchange", exchange(1))
    assert syncing.wait(5)
    try:
        assert log._roller.anchor("manual") is True  # the seal request timed out behind the slow fsync
        assert log.head == head and log.stats().size_anchored == head.size < log.stats().size_appended
        assert not log.checkpoint_now(0.2)
    finally:
        release.set()
    assert log.checkpoint_now(10)
    assert log.head is not None and log.head.size == log.stats().size_appended == head.size + 1
    assert log.close(10)
    assert run_verify(Built(tmp_path, directory, tmp_path / "keys")).problems == ()
