"""Adversarial suite: build a real log, change one thing, and require the exact codes and places."""

from __future__ import annotations

import base64
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.canonical import encode
from audit.checkpoint import parse_checkpoint
from audit.keys import LocalKeyProvider
from audit.log import AuditLog
from audit.records import GENESIS_MAC, chain_mac, make_line, split_line
from audit.signers import LocalSigner
from audit.verify import Code, Outcome, Report
from tests.audit.conftest import Built, build, config, run_verify, writable


def lines_of(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def write_lines(path: Path, lines: list[bytes]) -> None:
    writable(path).write_bytes(b"".join(line + b"\n" for line in lines))


def errors(report: Report) -> set[str]:
    return {str(p.code) for p in report.problems if p.severity == "error"}


def assert_invalid(report: Report, *codes: Code) -> None:
    assert report.outcome == Outcome.INVALID, report.problems
    assert {str(c) for c in codes} <= errors(report), report.problems


def where(report: Report, code: Code) -> list[tuple[str | None, int | None, int | None]]:
    return [(p.file, p.line, p.seq) for p in report.problems if p.code == code]


def test_clean_log_verifies_with_every_check(built: Built) -> None:
    report = run_verify(built)
    assert report.outcome == Outcome.VALID, report.problems
    assert report.problems == ()
    assert report.records == 28
    assert report.macs_checked == 28
    assert report.signatures_valid == report.checkpoints == 8
    assert report.boots == 2
    assert report.kinds == {"epoch_start": 2, "exchange": 24, "shutdown": 2}


def test_public_key_alone_is_enough(built: Built) -> None:
    report = run_verify(built, mac_key=False)
    assert report.outcome == Outcome.VALID
    assert report.macs_checked == 0


def test_flipped_byte_is_located_by_mac_and_root(built: Built) -> None:
    seg = built.segments()[1]  # seq 5..8
    data = seg.read_bytes()
    writable(seg).write_bytes(data.replace(b"req-00005", b"req-00099"))
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_MODIFIED, Code.RECORD_MAC_INVALID, Code.ROOT_MISMATCH)
    assert where(report, Code.RECORD_MAC_INVALID) == [("segments/00000000000000000005.jsonl", 2, 6)]
    assert report.outcome == run_verify(built, mac_key=False).outcome  # roots alone catch it too


def test_mac_recomputed_with_the_key_is_still_caught_by_the_tree(built: Built) -> None:
    """An insider with the chain key rewrites a record and every later MAC: only the signed roots can tell."""
    provider = LocalKeyProvider.from_file(built.chain_key)
    prev = GENESIS_MAC
    key = b""
    for seg in built.segments():
        out = []
        for line in lines_of(seg):
            _mac, record = split_line(line)
            obj = json.loads(record)
            if obj["kind"] == "epoch_start":
                key = provider.unwrap(obj["key"])
            if obj["seq"] == 6:
                obj["exchange"]["status"] = 500
                record = encode(obj)
            prev = chain_mac(key, prev, record)
            out.append(make_line(prev, record))
        write_lines(seg, out)
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_MODIFIED, Code.ROOT_MISMATCH)
    assert Code.RECORD_MAC_INVALID not in errors(report)
    assert where(report, Code.SEGMENT_MODIFIED)[0][0] == "segments/00000000000000000005.jsonl"


def test_deleted_record(built: Built) -> None:
    seg = built.segments()[1]
    lines = lines_of(seg)
    write_lines(seg, lines[:1] + lines[2:])
    report = run_verify(built)
    assert_invalid(report, Code.RECORD_SEQ_GAP, Code.SEGMENT_MODIFIED, Code.ROOT_MISMATCH, Code.CHAIN_BROKEN)
    assert where(report, Code.RECORD_SEQ_GAP) == [("segments/00000000000000000005.jsonl", 2, 7)]


def test_swapped_records(built: Built) -> None:
    seg = built.segments()[1]
    a, b, *rest = lines_of(seg)
    write_lines(seg, [b, a, *rest])
    report = run_verify(built)
    assert_invalid(report, Code.RECORD_SEQ_ORDER, Code.SEGMENT_MODIFIED, Code.ROOT_MISMATCH)
    assert where(report, Code.RECORD_SEQ_ORDER) == [("segments/00000000000000000005.jsonl", 2, 5)]


def test_duplicated_record(built: Built) -> None:
    seg = built.segments()[1]
    lines = lines_of(seg)
    write_lines(seg, [*lines[:2], lines[1], *lines[2:]])
    report = run_verify(built)
    assert_invalid(report, Code.RECORD_SEQ_DUP, Code.SEGMENT_MODIFIED, Code.ROOT_MISMATCH)
    assert where(report, Code.RECORD_SEQ_DUP) == [("segments/00000000000000000005.jsonl", 3, 6)]


def test_inserted_forged_record(built: Built) -> None:
    seg = built.segments()[1]
    lines = lines_of(seg)
    _mac, record = split_line(lines[0])
    obj = json.loads(record)
    obj["exchange"]["request_id"] = "forged"
    forged = make_line(b"\x01" * 32, encode(obj))
    write_lines(seg, [*lines[:1], forged, *lines[1:]])
    report = run_verify(built)
    assert_invalid(report, Code.RECORD_SEQ_DUP, Code.RECORD_MAC_INVALID, Code.SEGMENT_MODIFIED)


def test_truncated_segment(built: Built) -> None:
    seg = built.segments()[1]
    write_lines(seg, lines_of(seg)[:2])
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_MODIFIED, Code.RECORD_SEQ_GAP, Code.ROOT_MISMATCH)


def test_torn_line_inside_the_anchored_range(built: Built) -> None:
    seg = built.segments()[1]
    data = seg.read_bytes()
    writable(seg).write_bytes(data[:-20])
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_MODIFIED, Code.RECORD_MALFORMED)


def test_deleted_segment(built: Built) -> None:
    built.segments()[2].unlink()
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_MISSING, Code.RECORD_SEQ_GAP)
    assert where(report, Code.SEGMENT_MISSING)[0][0] == "segments/00000000000000000009.jsonl"


def test_unreferenced_file(built: Built) -> None:
    (built.directory / "segments" / "extra.jsonl").write_text("{}\n")
    (built.directory / "notes.txt").write_text("hello")
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_UNREFERENCED)
    assert {w[0] for w in where(report, Code.SEGMENT_UNREFERENCED)} == {"segments/extra.jsonl", "notes.txt"}


def test_copied_segment_under_a_new_name(built: Built) -> None:
    src = built.segments()[1]
    shutil.copy(src, built.directory / "segments" / "00000000000000000006.jsonl")
    report = run_verify(built)
    assert_invalid(report, Code.SEGMENT_UNREFERENCED)


def test_deleted_middle_checkpoint(built: Built) -> None:
    built.checkpoints()[2].unlink()
    report = run_verify(built)
    assert_invalid(report, Code.CHECKPOINT_MISSING, Code.SEGMENT_UNREFERENCED)
    assert Code.ROOT_MISMATCH not in errors(report)  # its segment is still read: later roots stay checkable


def test_deleted_newest_checkpoint_of_a_closed_log(built: Built) -> None:
    built.checkpoints()[-1].unlink()
    report = run_verify(built)
    assert_invalid(report, Code.CHECKPOINT_MISSING)
    assert Code.UNANCHORED_TAIL in report.codes()


def test_deleted_newest_checkpoints_before_a_reboot(tmp_path: Path) -> None:
    """Remove the last checkpoints of boot 0 and everything of boot 1: the tail holds boot 0's shutdown."""
    built = build(tmp_path, boots=1)
    built.checkpoints()[-1].unlink()
    built.checkpoints()[-1].unlink()
    report = run_verify(built)
    assert_invalid(report, Code.CHECKPOINT_MISSING)


def test_swapped_checkpoint_files(built: Built) -> None:
    one, two = built.checkpoints()[1], built.checkpoints()[2]
    a, b = one.read_bytes(), two.read_bytes()
    one.write_bytes(b)
    two.write_bytes(a)
    report = run_verify(built)
    assert_invalid(report, Code.CHECKPOINT_MISPLACED)


def test_replayed_checkpoint(built: Built) -> None:
    cps = built.checkpoints()
    cps[3].write_bytes(cps[1].read_bytes())
    report = run_verify(built)
    assert_invalid(report, Code.CHECKPOINT_DUP, Code.CHECKPOINT_MISSING)


def _resign(path: Path, mutate: object, signer: LocalSigner, *, keep_key: str | None = None) -> None:
    obj = json.loads(path.read_bytes())
    assert callable(mutate)
    mutate(obj["body"])
    obj["body"]["key"] = keep_key or signer.fingerprint
    obj["sig"]["key"] = obj["body"]["key"]
    obj["sig"]["value"] = base64.b64encode(signer.sign(encode(obj["body"]))).decode()
    path.write_bytes(encode(obj) + b"\n")


def test_checkpoint_resigned_with_another_key(built: Built) -> None:
    other = LocalSigner(ec.generate_private_key(ec.SECP256R1()))
    _resign(built.checkpoints()[-1], lambda body: body.update(reason="interval"), other)
    report = run_verify(built)
    assert_invalid(report, Code.KEY_UNKNOWN)
    assert where(report, Code.KEY_UNKNOWN)[0][0] == "checkpoints/000000000007.json"


def test_checkpoint_forged_under_the_real_fingerprint(built: Built) -> None:
    real = parse_checkpoint(built.checkpoints()[-1].read_bytes(), "x").checkpoint.key
    other = LocalSigner(ec.generate_private_key(ec.SECP256R1()))
    _resign(built.checkpoints()[-1], lambda body: body.update(reason="interval"), other, keep_key=real)
    assert_invalid(run_verify(built), Code.SIG_INVALID)


def test_checkpoint_root_edited_without_resigning(built: Built) -> None:
    path = built.checkpoints()[4]
    obj = json.loads(path.read_bytes())
    obj["body"]["root"] = "ab" * 32
    path.write_bytes(encode(obj) + b"\n")
    report = run_verify(built)
    assert_invalid(report, Code.SIG_INVALID, Code.ROOT_MISMATCH, Code.CHAIN_BROKEN)


def test_bad_consistency_proof(built: Built) -> None:
    path = built.checkpoints()[4]
    obj = json.loads(path.read_bytes())
    obj["body"]["consistency"][0] = "cd" * 32
    path.write_bytes(encode(obj) + b"\n")
    assert_invalid(run_verify(built), Code.CONSISTENCY_FAIL, Code.SIG_INVALID)


@pytest.mark.parametrize("edit", [
    lambda data: b"{not json",
    # Values no writer produces: the verifier reports them as tampering, never crashes or says inconclusive.
    lambda data: re.sub(rb'"size":\d+', b'"size":1' + b"0" * 400, data, count=1),  # beyond the safe integer range
    lambda data: data.replace(b'"consistency":', b'"deep":' + b"[" * 100_000 + b"]" * 100_000 + b',"consistency":', 1),
])
def test_malformed_checkpoint(built: Built, edit: Callable[[bytes], bytes]) -> None:
    path = built.checkpoints()[3]
    path.write_bytes(edit(path.read_bytes()))
    report = run_verify(built)
    assert_invalid(report, Code.CHECKPOINT_MALFORMED, Code.CHECKPOINT_MISSING)


def test_rollback_against_trusted_state(built: Built, tmp_path: Path) -> None:
    trusted = built.checkpoints()[-1].read_bytes()
    assert run_verify(built, trusted=trusted).outcome == Outcome.VALID
    # Roll back cleanly: drop the newest checkpoints with their segments (boot 1's last two).
    for cp in built.checkpoints()[-2:]:
        for seg in parse_checkpoint(cp.read_bytes(), "x").checkpoint.segments:
            (built.directory / seg.name).unlink()
        cp.unlink()
    assert run_verify(built).outcome == Outcome.VALID  # alone, a clean truncation looks like an older log
    assert_invalid(run_verify(built, trusted=trusted), Code.ROLLBACK)


def test_fork_against_trusted_state(tmp_path: Path) -> None:
    base = build(tmp_path / "a", boots=1)
    fork_root = tmp_path / "b"
    shutil.copytree(base.root, fork_root)
    fork = Built(fork_root, fork_root / "log", fork_root / "keys")
    for built, marker in ((base, "a"), (fork, "b")):
        log = AuditLog.open(config(built.directory, f"boot-{marker}"))
        log.append("exchange", {"note": marker})
        assert log.close(10)
    trusted = base.checkpoints()[-1].read_bytes()
    report = run_verify(fork, trusted=trusted)
    assert_invalid(report, Code.FORK)


def test_trusted_state_from_another_key_is_rejected(built: Built) -> None:
    other = LocalSigner(ec.generate_private_key(ec.SECP256R1()))
    path = built.root / "trusted.json"
    path.write_bytes(built.checkpoints()[-1].read_bytes())
    _resign(path, lambda body: None, other)
    assert_invalid(run_verify(built, trusted=path.read_bytes()), Code.TRUSTED_STATE_INVALID)


def test_stale_tail(built: Built) -> None:
    report = run_verify(built, max_age=60.0, now=4_000_000_000.0)
    assert_invalid(report, Code.STALE_TAIL)
    assert run_verify(built, max_age=3600.0).outcome == Outcome.VALID


def test_nothing_to_verify(tmp_path: Path, built: Built) -> None:
    empty = Built(tmp_path, tmp_path / "empty", built.keys)
    empty.directory.mkdir()
    report = run_verify(empty)
    assert report.outcome == Outcome.INCONCLUSIVE
    assert report.codes() == ["NOTHING_TO_VERIFY"]


def test_no_public_key_is_inconclusive(built: Built) -> None:
    report = run_verify(built, public_key=False)
    assert report.outcome == Outcome.INCONCLUSIVE
    assert "KEY_UNAVAILABLE" in report.codes()


def test_crashed_log_with_torn_tail_is_valid_with_warnings(tmp_path: Path) -> None:
    built = build(tmp_path, boots=1, close_last=False)
    tail = built.segments()[-1]
    writable(tail).write_bytes(tail.read_bytes() + b'{"_mac":"00')
    report = run_verify(built)
    assert report.outcome == Outcome.VALID, report.problems
    assert {"UNANCHORED_TAIL", "TORN_TAIL"} <= set(report.codes())


def test_tail_record_tampering_is_caught_by_mac(tmp_path: Path) -> None:
    built = build(tmp_path, boots=1, close_last=False)
    tail = built.segments()[-1]
    lines = lines_of(tail)
    writable(tail)
    assert lines, "the abandoned log leaves an unanchored tail"
    obj = json.loads(split_line(lines[0])[1])
    obj["note"] = "x"
    write_lines(tail, [make_line(split_line(lines[0])[0], encode(obj)), *lines[1:]])
    report = run_verify(built)
    assert_invalid(report, Code.RECORD_MAC_INVALID)


@pytest.mark.parametrize("strict", [False, True])
def test_strict_mode_agrees(built: Built, strict: bool) -> None:
    assert run_verify(built, strict=strict).outcome == Outcome.VALID


def test_report_json_is_stable(built: Built) -> None:
    seg = built.segments()[1]
    writable(seg).write_bytes(seg.read_bytes().replace(b"req-00005", b"req-00099"))
    out = run_verify(built).to_json()
    assert out["outcome"] == "invalid"
    problems = out["problems"]
    assert isinstance(problems, list)
    assert {"code", "severity", "message", "file", "line", "seq", "checkpoint"} == set(problems[0])
    json.dumps(out)


def test_newest_checkpoints_removed_from_a_running_log_show_as_a_long_tail(tmp_path: Path) -> None:
    """The writer checkpoints at least every heartbeat: a tail reaching far past the newest checkpoint means
    checkpoints were removed (here: the roller stops, 10 minutes of records stay unanchored)."""
    from tests.audit.conftest import abandon
    from tests.audit.test_log import FakeClock

    clock = FakeClock()
    directory = tmp_path / "log"
    log = AuditLog.open(config(directory, "b", clock=clock, heartbeat_interval=60.0))
    log.append("exchange", {"n": 1})
    assert log.checkpoint_now(10)
    log._stop_roller = True
    log._roller_wake.set()
    log._roller_thread.join(5)
    for minute in range(10):
        clock.advance(60)
        log.append("exchange", {"n": minute})
    assert log.flush(10)
    abandon(log)
    report = run_verify(Built(tmp_path, directory, tmp_path / "keys"))
    assert_invalid(report, Code.CHECKPOINT_MISSING)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(tmp_path_factory.mktemp("template"), boots=2, checkpoints_per_boot=2, records=3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_any_single_byte_change_in_any_file_is_detected(template: Built, tmp_path: Path,
                                                        data: st.DataObject) -> None:
    root = Path(tempfile.mkdtemp(dir=tmp_path)) / "case"
    shutil.copytree(template.root, root)
    built = Built(root, root / "log", root / "keys")
    files = sorted(p for p in built.directory.rglob("*") if p.is_file())
    target = data.draw(st.sampled_from(files))
    content = bytearray(target.read_bytes())
    at = data.draw(st.integers(0, len(content) - 1))
    content[at] = data.draw(st.integers(0, 255).filter(lambda b: b != content[at]))
    writable(target).write_bytes(bytes(content))
    report = run_verify(built)
    assert report.outcome == Outcome.INVALID, (target.name, at, report.problems)


def test_verifying_a_live_log_while_it_is_written(tmp_path: Path) -> None:
    """The writer seals, checkpoints and appends during verification: never an error, at most warnings."""
    import threading

    directory = tmp_path / "log"
    log = AuditLog.open(config(directory, "live", checkpoint_interval=0.02))
    stop = threading.Event()

    def writer() -> None:
        i = 0
        while not stop.is_set():
            log.append("exchange", {"n": i})
            i += 1
            if i % 50 == 0:
                stop.wait(0.001)

    assert log.checkpoint_now(10)
    thread = threading.Thread(target=writer)
    thread.start()
    try:
        built = Built(tmp_path, directory, tmp_path / "keys")
        for _ in range(8):
            report = run_verify(built)
            assert report.outcome == Outcome.VALID, report.problems
    finally:
        stop.set()
        thread.join()
        assert log.close(10)
    assert run_verify(built).problems == ()


def test_forged_far_future_checkpoint_index_is_reported_quickly(built: Built) -> None:
    obj = json.loads(built.checkpoints()[-1].read_bytes())
    obj["body"]["n"] = 10**12
    (built.directory / "checkpoints" / f"{10**12:012d}.json").write_bytes(encode(obj) + b"\n")
    report = run_verify(built)
    assert_invalid(report, Code.SIG_INVALID, Code.CHECKPOINT_MISSING)
