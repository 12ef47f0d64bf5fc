"""Many logs verified as one fleet: local directories and moto's S3 with Object Lock, logs written by the real
writer, tampered ones among them (a changed record, a deleted segment, a forged checkpoint signature), a stale
one and a cleanly closed old one."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

from audit.checkpoint import SignedCheckpoint, parse_checkpoint
from audit.cli import main
from audit.fleet import Trust, discover_directory, discover_s3, verify_fleet
from audit.log import AuditConfig, AuditLog, Origin
from audit.stores import S3Store
from tests.audit.conftest import abandon, exchange, writable
from tests.audit.test_aws import _write_log, aws, moto_url  # noqa: F401 - the session's moto server, shared

HOUR = 3600.0


def write_log(directory: Path, keys: Path, pod: str, *, records: int = 30, close: bool = True,
              age: float = 0.0, store: S3Store | None = None) -> Path:
    """A log by the real writer: two checkpoints, then a clean close (or a crash right after the second
    checkpoint: nothing unanchored, no shutdown record). `age` moves the writer's clock into the past."""
    clock: Callable[[], float] = (lambda: time.time() - age) if age else time.time
    log = AuditLog.open(AuditConfig(
        directory=directory, origin=Origin("test", "ns", pod, "b0"), key_dir=keys, store=store, clock=clock,
        checkpoint_interval=HOUR, heartbeat_interval=HOUR, tick=0.01))
    for i in range(records):
        log.append("exchange", exchange(i))
        if i == records // 2:
            assert log.checkpoint_now(10)
    if close:
        assert log.close(10)
    else:
        assert log.checkpoint_now(10)
        abandon(log)
    return directory


def change_record(directory: Path) -> None:
    segment = writable(sorted((directory / "segments").iterdir())[0])
    segment.write_bytes(segment.read_bytes().replace(b"req-00001", b"req-99999"))


def delete_segment(directory: Path) -> None:
    sorted((directory / "segments").iterdir())[1].unlink()


def forge_signature(directory: Path) -> None:
    """Checkpoint 0 re-signed by a key nobody trusts, still naming the trusted key and in canonical form."""
    path = writable(sorted((directory / "checkpoints").iterdir())[0])
    signed = parse_checkpoint(path.read_bytes(), path.name)
    forged = ec.generate_private_key(ec.SECP256R1()).sign(signed.checkpoint.body_bytes(), ec.ECDSA(hashes.SHA256()))
    path.write_bytes(SignedCheckpoint(signed.checkpoint, forged, signed.frontier).to_bytes())


def codes(log: dict[str, Any]) -> set[str]:
    return {p["code"] for p in log["report"]["problems"]}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["verify", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


# --- a directory of logs ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fleet_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fleet")
    fleet, keys = root / "fleet", root / "keys"
    write_log(fleet / "c1/ns/pod-a", keys, "pod-a")
    write_log(fleet / "c1/ns/pod-b", keys, "pod-b", close=False)  # crashed, but anchored a moment ago
    change_record(write_log(fleet / "c1/ns/pod-c", keys, "pod-c"))
    delete_segment(write_log(fleet / "c1/ns/pod-d", keys, "pod-d"))
    forge_signature(write_log(fleet / "c2/ns/pod-e", keys, "pod-e"))
    write_log(fleet / "c2/ns/pod-f", keys, "pod-f", close=False, age=2 * HOUR)  # stopped anchoring 2 h ago
    write_log(fleet / "c2/ns/pod-g", keys, "pod-g", age=2 * HOUR)  # shut down cleanly 2 h ago
    (fleet / "README.txt").write_text("not a log\n")
    return fleet, keys


EXPECTED = {"c1/ns/pod-a": "valid", "c1/ns/pod-b": "valid", "c1/ns/pod-c": "invalid", "c1/ns/pod-d": "invalid",
            "c2/ns/pod-e": "invalid", "c2/ns/pod-f": "stale", "c2/ns/pod-g": "valid"}


def test_discovery_of_a_directory(fleet_dir: tuple[Path, Path]) -> None:
    fleet, _keys = fleet_dir
    found = discover_directory(fleet)
    assert [ref.name for ref in found.logs] == sorted(EXPECTED)
    assert found.stray == ("README.txt",)
    assert not found.target_is_log
    assert discover_directory(fleet / "c1/ns/pod-a").target_is_log


def test_directory_fleet_per_log_results_and_summary(fleet_dir: tuple[Path, Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    fleet, keys = fleet_dir
    code, out = run(capsys, str(fleet), "--key-dir", str(keys), "--max-age", "1h", "--jobs", "2")
    assert code == 1
    logs = {log["name"]: log for log in out["logs"]}
    assert {name: log["status"] for name, log in logs.items()} == EXPECTED
    assert codes(logs["c1/ns/pod-a"]) == set() and logs["c1/ns/pod-a"]["closed"]
    assert not logs["c1/ns/pod-b"]["closed"]
    assert "RECORD_MAC_INVALID" in codes(logs["c1/ns/pod-c"])
    assert "SEGMENT_MISSING" in codes(logs["c1/ns/pod-d"])
    assert codes(logs["c2/ns/pod-e"]) == {"SIG_INVALID"}
    assert codes(logs["c2/ns/pod-f"]) == {"STALE_TAIL"} and logs["c2/ns/pod-f"]["head_age_seconds"] > 1.9 * HOUR
    # An old log that ended with its shutdown checkpoint is closed, not stale.
    assert codes(logs["c2/ns/pod-g"]) == set() and logs["c2/ns/pod-g"]["closed"]
    # 32 records in a closed log (epoch, 30 exchanges, shutdown), 31 in a crashed one, 17 left in pod-d;
    # pod-d's records no longer reach its shutdown checkpoint, so it is not counted as closed.
    assert out["summary"] == {"logs": 7, "valid": 3, "invalid": 3, "stale": 1, "inconclusive": 0,
                              "records": 4 * 32 + 2 * 31 + 17, "closed": 4, "stray": 1}
    assert out["status"] == "invalid" and out["stray"] == ["README.txt"]
    assert out["jobs"] == 2 and out["executor"] == "process"
    # The same fleet without a freshness bound: the stopped pod is not judged on age.
    code, out = run(capsys, str(fleet), "--key-dir", str(keys))
    assert {log["name"]: log["status"] for log in out["logs"]}["c2/ns/pod-f"] == "valid"


def test_text_report(fleet_dir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    fleet, keys = fleet_dir
    assert main(["verify", str(fleet), "--key-dir", str(keys), "--max-age", "1h", "-j", "1"]) == 1
    text = capsys.readouterr().out
    assert text.startswith(f"Verifying 7 audit log(s) under {fleet} (one at a time)")
    assert "  STALE        c2/ns/pod-f" in text and "SIG_INVALID" in text
    assert "closed (shutdown checkpoint)" in text and "README.txt" in text
    assert "Summary: 7 log(s): 3 valid, 3 invalid, 1 stale, 0 inconclusive (4 closed)" in text
    assert text.rstrip().endswith("Result: INVALID")


@pytest.mark.parametrize("executor", ["process", "thread", "serial"])
def test_executors_agree(fleet_dir: tuple[Path, Path], executor: str) -> None:
    fleet, keys = fleet_dir
    trust = Trust(public_keys=((keys / "signing.pub.pem").read_bytes(),), key_files=(str(keys / "chain.key"),))
    report = verify_fleet(discover_directory(fleet), trust, max_age=HOUR, jobs=2,
                          executor=executor)  # type: ignore[arg-type]
    assert {r.ref.name: str(r.status) for r in report.results} == EXPECTED
    assert report.executor == executor


def test_exit_codes_valid_and_inconclusive(fleet_dir: tuple[Path, Path], tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    fleet, keys = fleet_dir
    valid = tmp_path / "valid"
    for pod in ("c1/ns/pod-a", "c2/ns/pod-g"):
        shutil.copytree(fleet / pod, valid / pod)
    code, out = run(capsys, str(valid), "--key-dir", str(keys), "--max-age", "1h")
    assert code == 0 and out["status"] == "valid" and out["summary"]["valid"] == 2
    # A log whose files are all gone is still found, and cannot be verified.
    (valid / "c3/ns/pod-z/segments").mkdir(parents=True)
    code, out = run(capsys, str(valid), "--key-dir", str(keys))
    assert code == 2
    gone = next(log for log in out["logs"] if log["name"] == "c3/ns/pod-z")
    assert gone["status"] == "inconclusive" and "NOTHING_TO_VERIFY" in codes(gone)
    # Without the keys nothing is proven: every log inconclusive, exit 2.
    code, out = run(capsys, str(valid))
    assert code == 2 and out["summary"]["inconclusive"] == 3


def test_one_log_keeps_the_one_log_report(fleet_dir: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    fleet, keys = fleet_dir
    code, out = run(capsys, str(fleet / "c1/ns/pod-a"), "--key-dir", str(keys))
    assert code == 0 and out["outcome"] == "valid" and "logs" not in out
    code, out = run(capsys, str(fleet / "c1/ns/pod-a"), "--key-dir", str(keys), "--fleet")
    assert code == 0 and [log["name"] for log in out["logs"]] == ["."]


def test_nested_logs_are_kept_apart(fleet_dir: tuple[Path, Path], tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    fleet, keys = fleet_dir
    outer = tmp_path / "outer"
    shutil.copytree(fleet / "c1/ns/pod-a", outer)
    shutil.copytree(fleet / "c2/ns/pod-g", outer / "inner")
    code, out = run(capsys, str(outer), "--key-dir", str(keys), "--fleet")
    assert code == 0, out
    assert [(log["name"], log["status"]) for log in out["logs"]] == [(".", "valid"), ("inner", "valid")]


@pytest.mark.parametrize("argv", [["--jobs", "0"], ["--trusted-state", "x.json"], ["--save-state", "x.json"]])
def test_fleet_usage_errors(fleet_dir: tuple[Path, Path], argv: list[str],
                            capsys: pytest.CaptureFixture[str]) -> None:
    fleet, keys = fleet_dir
    assert main(["verify", str(fleet), "--key-dir", str(keys), *argv]) == 64
    assert "warden audit verify" in capsys.readouterr().err


# --- an S3 prefix of logs, mirrored under Object Lock ---------------------------------------------------------


def upload(s3: Any, bucket: str, directory: Path, prefix: str) -> None:
    """What a pod without the Object Lock mirror (or an attacker with write access) leaves: plain objects."""
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        s3.put_object(Bucket=bucket, Key=f"{prefix}/{path.relative_to(directory).as_posix()}", Body=path.read_bytes())


def delete_all_versions(s3: Any, bucket: str, key: str) -> None:
    for v in s3.list_object_versions(Bucket=bucket, Prefix=key)["Versions"]:
        s3.delete_object(Bucket=bucket, Key=key, VersionId=v["VersionId"])


@pytest.fixture(scope="module")
def s3_fleet(moto_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:  # noqa: F811
    root = tmp_path_factory.mktemp("s3fleet")
    keys = root / "keys"
    s3 = boto3.client("s3", endpoint_url=moto_url, region_name="us-east-1")
    bucket = "fleet-audit"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)

    def mirror(pod: str) -> S3Store:
        return S3Store(bucket, f"fleet/c1/ns/{pod}", endpoint_url=moto_url, retention_days=1)

    write_log(root / "pod-a", keys, "pod-a", store=mirror("pod-a"))
    write_log(root / "pod-b", keys, "pod-b", store=mirror("pod-b"), close=False)
    write_log(root / "pod-c", keys, "pod-c", store=mirror("pod-c"))
    write_log(root / "pod-d", keys, "pod-d", store=mirror("pod-d"))
    write_log(root / "pod-f", keys, "pod-f", store=mirror("pod-f"), close=False, age=2 * HOUR)
    # Under Object Lock a changed record is a new version and a deletion a delete marker; the originals stay.
    segment = "fleet/c1/ns/pod-c/segments/00000000000000000000.jsonl"
    original = s3.get_object(Bucket=bucket, Key=segment)["Body"].read()
    s3.put_object(Bucket=bucket, Key=segment, Body=original.replace(b"req-00001", b"req-99999"))
    s3.delete_object(Bucket=bucket, Key="fleet/c1/ns/pod-d/segments/00000000000000000000.jsonl")
    # Logs uploaded without Object Lock: a forged checkpoint signature, a segment really deleted.
    forge_signature(write_log(root / "pod-e", keys, "pod-e"))
    upload(s3, bucket, root / "pod-e", "fleet/c2/ns/pod-e")
    upload(s3, bucket, write_log(root / "pod-h", keys, "pod-h"), "fleet/c2/ns/pod-h")
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="fleet/c2/ns/pod-h/segments/")["Contents"]
    delete_all_versions(s3, bucket, sorted(o["Key"] for o in listed)[1])
    s3.put_object(Bucket=bucket, Key="fleet/README.txt", Body=b"not a log\n")
    return {"url": moto_url, "s3": s3, "bucket": bucket, "keys": keys}


S3_EXPECTED = {"c1/ns/pod-a": "valid", "c1/ns/pod-b": "valid", "c1/ns/pod-c": "invalid",
               "c1/ns/pod-d": "invalid", "c1/ns/pod-f": "stale", "c2/ns/pod-e": "invalid", "c2/ns/pod-h": "invalid"}


@pytest.mark.slow
def test_s3_discovery(s3_fleet: dict[str, Any]) -> None:
    found = discover_s3(f"s3://{s3_fleet['bucket']}/fleet", endpoint_url=s3_fleet["url"])
    assert [ref.name for ref in found.logs] == sorted(S3_EXPECTED)
    assert found.logs[0].prefix == "fleet/c1/ns/pod-a/" and found.stray == ("README.txt",)


@pytest.mark.slow
def test_s3_fleet_per_log_results_and_summary(s3_fleet: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    keys = s3_fleet["keys"]
    code, out = run(capsys, f"s3://{s3_fleet['bucket']}/fleet/", "--key-dir", str(keys), "--endpoint-url",
                    s3_fleet["url"], "--max-age", "1h", "--jobs", "2")
    assert code == 1
    logs = {log["name"]: log for log in out["logs"]}
    assert {name: log["status"] for name, log in logs.items()} == S3_EXPECTED
    assert codes(logs["c1/ns/pod-a"]) == set() and logs["c1/ns/pod-a"]["closed"]
    assert logs["c1/ns/pod-a"]["source"] == f"s3://{s3_fleet['bucket']}/fleet/c1/ns/pod-a/"
    # The original versions were verified: only the store's own evidence of the attempt.
    assert codes(logs["c1/ns/pod-c"]) == {"STORE_OVERWRITTEN"}
    assert codes(logs["c1/ns/pod-d"]) == {"STORE_DELETE_MARKER"}
    assert codes(logs["c2/ns/pod-e"]) == {"SIG_INVALID"}
    assert "SEGMENT_MISSING" in codes(logs["c2/ns/pod-h"])
    assert codes(logs["c1/ns/pod-f"]) == {"STALE_TAIL"}
    assert out["summary"] == {"logs": 7, "valid": 2, "invalid": 4, "stale": 1, "inconclusive": 0,
                              "records": 4 * 32 + 2 * 31 + 17, "closed": 4, "stray": 1}
    # One log of the prefix alone, in the one-log form, as before.
    code, one = run(capsys, f"s3://{s3_fleet['bucket']}/fleet/c1/ns/pod-a", "--key-dir", str(keys),
                    "--endpoint-url", s3_fleet["url"])
    assert code == 0 and one["outcome"] == "valid"


@pytest.mark.slow
def test_s3_fleet_of_valid_logs_and_a_missing_bucket(s3_fleet: dict[str, Any],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    keys, url = s3_fleet["keys"], s3_fleet["url"]
    code, out = run(capsys, f"s3://{s3_fleet['bucket']}/fleet/c1/ns", "--key-dir", str(keys), "--endpoint-url", url,
                    "--jobs", "1")
    assert out["summary"]["logs"] == 5 and code == 1  # pod-c and pod-d
    code, out = run(capsys, f"s3://{s3_fleet['bucket']}/fleet/c1/ns/pod-b/", "--key-dir", str(keys),
                    "--endpoint-url", url, "--fleet")
    assert code == 0 and out["status"] == "valid"
    assert main(["verify", "s3://no-such-bucket/x", "--key-dir", str(keys), "--endpoint-url", url, "--fleet"]) == 2
    assert "ListObjectVersions failed" in capsys.readouterr().err


def test_a_directory_that_cannot_be_listed_makes_the_fleet_inconclusive(fleet_dir: tuple[Path, Path]) -> None:
    fleet, keys = fleet_dir
    found = discover_directory(fleet / "c1/ns/pod-a")
    trust = Trust(public_keys=((keys / "signing.pub.pem").read_bytes(),), key_files=(str(keys / "chain.key"),))
    assert verify_fleet(found, trust).status == "valid"
    hidden = dataclasses.replace(found, unreadable=("c9: Permission denied",))
    report = verify_fleet(hidden, trust)
    assert report.status == "inconclusive" and report.to_json()["unreadable"] == ["c9: Permission denied"]


@pytest.mark.slow
def test_kms_signed_fleet_each_worker_fetches_the_keys(tmp_path: Path, aws: dict[str, Any],  # noqa: F811
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    for pod in ("pod-0", "pod-1", "pod-2"):
        _write_log(tmp_path / pod, aws, f"fleet/{pod}")
    code, out = run(capsys, f"s3://{aws['bucket']}/fleet", "--kms-key-id", aws["sign_key"], "--kms-decrypt",
                    "--endpoint-url", aws["url"], "--jobs", "2")
    assert code == 0, out
    assert [(log["name"], log["status"]) for log in out["logs"]] == [
        ("pod-0", "valid"), ("pod-1", "valid"), ("pod-2", "valid")]
    assert all(log["report"]["macs_checked"] == log["report"]["records"] == 42 for log in out["logs"])
