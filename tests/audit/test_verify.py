"""Adversarial suite: build a real log, change one thing, and require the exact codes and places."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.canonical import encode
from audit.checkpoint import parse_checkpoint
from audit.keys import EpochKey, KmsKeyProvider, LocalKeyProvider
from audit.log import AuditLog
from audit.records import GENESIS_MAC, chain_mac, make_line, split_line
from audit.recovery import boot_link
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


# --- the unanchored tail's epoch keys --------------------------------------------------------------------------
# Records after the newest checkpoint are attested by their MACs alone. An epoch record there whose key cannot
# be unwrapped must not turn the MAC checks off and leave the forged records after it "valid".


def _record(line: bytes) -> dict[str, Any]:
    obj: dict[str, Any] = json.loads(split_line(line)[1])
    return obj


def forge_tail(built: Built, *, key: Callable[[dict[str, Any]], dict[str, Any]], boot: bool = False,
               records: int = 3) -> tuple[str, int, int]:
    """Append by hand what an attacker without the chain key can write: an epoch record naming a key of its
    own choice, then records with made-up MACs. Everything the verifier checks without the key (seq, origin,
    log id, encryption context, timestamps, the boot link) is copied from the real log. A forged boot starts
    a segment of its own after the newest checkpoint (appending to a sealed one would change its hash).
    Returns the file, line and seq of the forged epoch record."""
    first = _record(lines_of(built.segments()[0])[0])
    last_segment = built.segments()[-1]
    last = _record(lines_of(last_segment)[-1])
    seq = last["seq"] + 1
    origin = "test/ns/pod-0/forged" if boot else last["origin"]
    descriptor = dict(first["key"])
    descriptor["context"] = {**descriptor["context"], "warden:epoch": "7", "warden:origin": origin}
    epoch = {**first, "seq": seq, "ts": last["ts"], "origin": origin, "epoch": 7, "boot": boot,
             "key": key(descriptor)}
    if boot:
        head = parse_checkpoint(built.checkpoints()[-1].read_bytes(), "head").checkpoint
        assert head.size == seq, "a forged boot must start at the newest checkpoint"
        epoch["prev_checkpoint"] = boot_link(head)
        segment = built.directory / "segments" / f"{seq:020d}.jsonl"
        segment.write_bytes(b"")
    else:
        del epoch["prev_checkpoint"], epoch["recovered"]
        segment = last_segment
    lines = [make_line(bytes(range(32)), encode(epoch))]
    for i in range(records):
        record = {"kind": "exchange", "origin": origin, "seq": seq + 1 + i, "ts": last["ts"],
                  "exchange": {"request_id": f"forged-{i}", "route": "chat", "status": 200}}
        lines.append(make_line(bytes(32), encode(record)))
    before = len(lines_of(segment))
    writable(segment).write_bytes(segment.read_bytes() + b"".join(line + b"\n" for line in lines))
    return f"segments/{segment.name}", before + 1, seq


def foreign_key(descriptor: dict[str, Any]) -> dict[str, Any]:
    """Wrapped by a master key the attacker made up: the key id is not the verifier's."""
    return dict(LocalKeyProvider(bytes(range(32))).new_key(descriptor["context"]).descriptor)


def forged_wrapped_key(descriptor: dict[str, Any]) -> dict[str, Any]:
    """Names the real key, but the wrapped bytes are made up (they do not decrypt under it)."""
    return {**descriptor, "wrapped": base64.b64encode(bytes(60)).decode()}


def _other_key_file(root: Path) -> Path:
    path = root / "other-keys" / "chain.key"
    path.parent.mkdir()
    path.write_text(bytes(range(1, 33)).hex())
    return path


@pytest.fixture
def crashed(tmp_path: Path) -> Built:
    """One boot that crashed with records after its newest checkpoint (the unanchored tail)."""
    return build(tmp_path, boots=1, close_last=False)


def test_forged_tail_epoch_naming_a_key_the_verifier_does_not_hold_is_invalid(crashed: Built) -> None:
    assert run_verify(crashed).outcome == Outcome.VALID
    file, line, seq = forge_tail(crashed, key=foreign_key)
    report = run_verify(crashed)
    assert_invalid(report, Code.EPOCH_KEY_UNKNOWN)
    assert where(report, Code.EPOCH_KEY_UNKNOWN) == [(file, line, seq)]
    assert "4 unanchored record(s)" in next(p.message for p in report.problems if p.code == Code.EPOCH_KEY_UNKNOWN)


@pytest.mark.parametrize("forge", [
    forged_wrapped_key,
    lambda d: {**d, "wrapped": "not base64!"},
    lambda d: {**d, "context": {**d["context"], "warden:epoch": 7}},  # not a string context
    lambda d: {**d, "provider": "aws-kms"},  # the key source changes within the boot
], ids=["does-not-decrypt", "not-base64", "context-not-text", "provider-switch"])
def test_forged_tail_epoch_with_a_bad_descriptor_is_invalid(crashed: Built,
                                                           forge: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    file, line, seq = forge_tail(crashed, key=forge)
    report = run_verify(crashed)
    assert_invalid(report, Code.EPOCH_KEY_INVALID)
    assert where(report, Code.EPOCH_KEY_INVALID) == [(file, line, seq)]


def test_forged_boot_after_a_closed_log_naming_an_unknown_key_is_invalid(built: Built) -> None:
    file, line, seq = forge_tail(built, key=foreign_key, boot=True)
    report = run_verify(built)
    assert_invalid(report, Code.EPOCH_KEY_UNKNOWN)
    assert where(report, Code.EPOCH_KEY_UNKNOWN) == [(file, line, seq)]
    assert run_verify(built, mac_key=False).outcome == Outcome.INCONCLUSIVE


def test_a_tail_without_its_chain_key_is_inconclusive_not_valid(crashed: Built) -> None:
    """Only the public key: the anchored records are proven by the signed roots, the tail by nothing."""
    report = run_verify(crashed, mac_key=False)
    assert report.outcome == Outcome.INCONCLUSIVE, report.problems
    assert [p.code for p in report.problems if p.severity == "inconclusive"] == [Code.TAIL_KEY_UNAVAILABLE]
    assert "4 unanchored record(s) (seq 13..16)" in report.problems[0].message
    forge_tail(crashed, key=foreign_key)
    assert run_verify(crashed, mac_key=False).outcome == Outcome.INCONCLUSIVE


def test_the_wrong_chain_key_file_is_inconclusive(crashed: Built) -> None:
    """A key file that opens none of the log's epochs says nothing about the records: the key is unavailable."""
    other = Built(crashed.root, crashed.directory, _other_key_file(crashed.root).parent)
    shutil.copy(crashed.public_key, other.public_key)
    report = run_verify(other)
    assert report.outcome == Outcome.INCONCLUSIVE, report.problems
    assert "TAIL_KEY_UNAVAILABLE" in report.codes()
    forge_tail(crashed, key=foreign_key)
    assert run_verify(other).outcome == Outcome.INCONCLUSIVE


def rotated(root: Path, *, close_last: bool) -> Built:
    """Boot 0 with the key directory's chain key, boot 1 with another one (a rotated chain key)."""
    built = build(root, boots=1)
    other = LocalKeyProvider.from_file(_other_key_file(root))
    log = AuditLog.open(config(built.directory, "boot1", key_provider=other))
    log.append("exchange", {"n": 1})
    assert log.checkpoint_now(10)
    log.append("exchange", {"n": 2})
    if close_last:
        assert log.close(10)
    else:
        from tests.audit.conftest import abandon

        assert log.flush(10)
        abandon(log)
    return built


def test_anchored_epoch_whose_key_the_verifier_lacks_is_reported_not_failed(tmp_path: Path) -> None:
    """Signed checkpoints prove the anchored records; their MACs only add to that: info, still valid."""
    report = run_verify(rotated(tmp_path, close_last=True))
    assert report.outcome == Outcome.VALID, report.problems
    assert where(report, Code.MAC_KEY_UNAVAILABLE) == [("segments/00000000000000000014.jsonl", 1, 14)]


def test_tail_of_an_anchored_epoch_whose_key_the_verifier_lacks_is_inconclusive(tmp_path: Path) -> None:
    """The epoch record is signed (a writer wrote it: a rotated key, not a forgery), but the records after the
    newest checkpoint are attested by that key alone."""
    built = rotated(tmp_path, close_last=False)
    report = run_verify(built)
    assert report.outcome == Outcome.INCONCLUSIVE, report.problems
    assert where(report, Code.TAIL_KEY_UNAVAILABLE) == [("segments/00000000000000000014.jsonl", 1, 14)]
    assert "1 unanchored record(s) (seq 16..16)" in report.problems[0].message


class _CorruptingKeys:
    """A writer whose key source hands out descriptors that do not open (a bug, or an insider at the signer)."""

    name = "local"

    def __init__(self, inner: LocalKeyProvider) -> None:
        self.inner = inner

    def new_key(self, context: Mapping[str, str]) -> EpochKey:
        epoch = self.inner.new_key(context)
        return EpochKey(epoch.key, forged_wrapped_key(dict(epoch.descriptor)))

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        return self.inner.unwrap(descriptor)


def test_anchored_epoch_that_does_not_decrypt_under_its_named_key_is_invalid(tmp_path: Path) -> None:
    """Signed or not, no writer writes a wrapped key that its own key cannot open."""
    keys = LocalKeyProvider.from_file(tmp_path / "keys" / "chain.key", create=True)
    built = build(tmp_path, boots=1, key_provider=_CorruptingKeys(keys))
    report = run_verify(built)
    assert_invalid(report, Code.EPOCH_KEY_INVALID)
    assert where(report, Code.EPOCH_KEY_INVALID) == [("segments/00000000000000000000.jsonl", 1, 0)]


class _FakeKms:
    """KMS GenerateDataKey/Decrypt for KmsKeyProvider: ciphertexts it issued decrypt; anything else gets KMS's
    answer for a blob it did not issue; `down` makes every call fail as an unreachable endpoint does."""

    def __init__(self) -> None:
        self.issued: dict[bytes, bytes] = {}
        self.down = False

    def generate_data_key(self, **kwargs: Any) -> dict[str, Any]:
        key, blob = os.urandom(32), os.urandom(48)
        self.issued[blob] = key
        return {"Plaintext": key, "CiphertextBlob": blob, "KeyId": f"arn:aws:kms:eu:1:key/{kwargs['KeyId']}"}

    def decrypt(self, **kwargs: Any) -> dict[str, Any]:
        if self.down:
            raise ConnectionError("Could not connect to the endpoint URL")
        if not str(kwargs.get("KeyId", "")).endswith("/data"):
            raise _ClientError("NotFoundException")
        if kwargs["CiphertextBlob"] not in self.issued:
            raise _ClientError("InvalidCiphertextException")
        return {"Plaintext": self.issued[kwargs["CiphertextBlob"]]}


class _ClientError(Exception):
    def __init__(self, code: str) -> None:
        super().__init__(f"An error occurred ({code})")
        self.response = {"Error": {"Code": code}}


@pytest.mark.parametrize(("forge", "code"), [
    (lambda d: {**d, "key_id": "arn:aws:kms:eu:1:key/attacker"}, Code.EPOCH_KEY_UNKNOWN),
    (forged_wrapped_key, Code.EPOCH_KEY_INVALID),
])
def test_kms_refusals_of_a_forged_tail_epoch_are_integrity_failures(
        tmp_path: Path, forge: Callable[[dict[str, Any]], dict[str, Any]], code: Code) -> None:
    kms = _FakeKms()
    built = build(tmp_path, boots=1, close_last=False, key_provider=KmsKeyProvider("data", client=kms))
    report = run_verify(built, providers=[KmsKeyProvider("", client=kms)])
    assert report.outcome == Outcome.VALID and report.macs_checked == report.records, report.problems
    forge_tail(built, key=forge)
    assert_invalid(run_verify(built, providers=[KmsKeyProvider("", client=kms)]), code)


def test_kms_unreachable_is_inconclusive(tmp_path: Path) -> None:
    kms = _FakeKms()
    built = build(tmp_path, boots=1, close_last=False, key_provider=KmsKeyProvider("data", client=kms))
    kms.down = True
    report = run_verify(built, providers=[KmsKeyProvider("", client=kms)])
    assert report.outcome == Outcome.INCONCLUSIVE, report.problems
    assert "TAIL_KEY_UNAVAILABLE" in report.codes() and "Could not connect" in report.problems[0].message
    forge_tail(built, key=lambda d: {**d, "key_id": "arn:aws:kms:eu:1:key/attacker"})
    assert run_verify(built, providers=[KmsKeyProvider("", client=kms)]).outcome == Outcome.INCONCLUSIVE
    # Closed, the same log is all anchored: its signatures prove it, the MACs could not add to that.
    closed = build(tmp_path / "closed", boots=1, key_provider=KmsKeyProvider("data", client=kms))
    report = run_verify(closed, providers=[KmsKeyProvider("", client=kms)])
    assert report.outcome == Outcome.VALID and report.codes() == ["MAC_KEY_UNAVAILABLE"]
