"""The AWS path against moto's server: KMS data keys and Sign (RAW), S3 with Object Lock, verify s3://."""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from audit.cli import main
from audit.errors import ConfigError
from audit.log import AuditLog, Origin, aws_config
from audit.stores import S3Store
from tests.audit.conftest import exchange

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def moto_url() -> Iterator[str]:
    from moto.server import ThreadedMotoServer

    saved = {k: os.environ.get(k) for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_DEFAULT_REGION")}
    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing",
                      AWS_DEFAULT_REGION="us-east-1")
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@pytest.fixture
def aws(moto_url: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    kms = boto3.client("kms", endpoint_url=moto_url, region_name="us-east-1")
    s3 = boto3.client("s3", endpoint_url=moto_url, region_name="us-east-1")
    sign_key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    data_key = kms.create_key()["KeyMetadata"]["KeyId"]
    bucket = f"audit-{abs(hash(request.node.name)) % 10**8}"
    s3.create_bucket(Bucket=bucket, ObjectLockEnabledForBucket=True)
    return {"url": moto_url, "kms": kms, "s3": s3, "sign_key": sign_key, "data_key": data_key, "bucket": bucket}


def _write_log(tmp_path: Path, aws: dict[str, Any], prefix: str) -> AuditLog:
    log = AuditLog.open(aws_config(
        tmp_path / "log", origin=Origin("test", "ns", "pod-0", "aws"), s3_url=f"s3://{aws['bucket']}/{prefix}",
        data_key_id=aws["data_key"], signing_key_id=aws["sign_key"], endpoint_url=aws["url"], retention_days=1,
        checkpoint_interval=0.2, heartbeat_interval=3600.0, tick=0.01))
    for i in range(30):
        log.append("exchange", exchange(i))
    assert log.checkpoint_now(10)
    for i in range(30, 40):
        log.append("exchange", exchange(i))
    assert log.close(15)
    return log


def _verify(aws: dict[str, Any], target: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    code = main(["verify", target, "--kms-key-id", aws["sign_key"], "--kms-decrypt", "--endpoint-url",
                 aws["url"], "--json", *extra])
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    report["exit"] = code
    return report


def test_kms_and_s3_object_lock_end_to_end(tmp_path: Path, aws: dict[str, Any],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    _write_log(tmp_path, aws, "cluster/ns/pod")
    head = aws["s3"].head_object(Bucket=aws["bucket"], Key="cluster/ns/pod/checkpoints/000000000000.json")
    assert head["ObjectLockMode"] == "COMPLIANCE"
    report = _verify(aws, f"s3://{aws['bucket']}/cluster/ns/pod", capsys)
    assert report["exit"] == 0, report["problems"]
    assert report["records"] == 42 and report["macs_checked"] == 42
    assert report["signatures_valid"] == report["checkpoints"] >= 2
    # The local directory holds the same log and verifies the same way.
    assert _verify(aws, str(tmp_path / "log"), capsys)["exit"] == 0


def test_overwritten_and_deleted_objects_are_reported_and_originals_used(
        tmp_path: Path, aws: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _write_log(tmp_path, aws, "p")
    s3 = aws["s3"]
    key = "p/segments/00000000000000000000.jsonl"
    original = s3.get_object(Bucket=aws["bucket"], Key=key)["Body"].read()
    s3.put_object(Bucket=aws["bucket"], Key=key, Body=original.replace(b"req-00001", b"req-99999"))
    s3.delete_object(Bucket=aws["bucket"], Key="p/checkpoints/000000000001.json")
    report = _verify(aws, f"s3://{aws['bucket']}/p", capsys)
    codes = {p["code"] for p in report["problems"]}
    assert report["exit"] == 1
    assert {"STORE_OVERWRITTEN", "STORE_DELETE_MARKER"} <= codes
    # The original versions were verified: no record or root problem.
    assert not codes & {"RECORD_MAC_INVALID", "ROOT_MISMATCH", "SEGMENT_MODIFIED", "CHECKPOINT_MISSING"}


def test_compliance_versions_cannot_be_deleted(tmp_path: Path, aws: dict[str, Any]) -> None:
    _write_log(tmp_path, aws, "q")
    s3 = aws["s3"]
    version = s3.list_object_versions(Bucket=aws["bucket"], Prefix="q/checkpoints/")["Versions"][0]
    with pytest.raises(s3.exceptions.ClientError):
        s3.delete_object(Bucket=aws["bucket"], Key=version["Key"], VersionId=version["VersionId"])


def test_bucket_without_object_lock_is_refused(aws: dict[str, Any]) -> None:
    aws["s3"].create_bucket(Bucket="plain-bucket")
    with pytest.raises(ConfigError):
        S3Store("plain-bucket", endpoint_url=aws["url"])


def test_kms_signature_without_decrypt_permission_still_verifies(
        tmp_path: Path, aws: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _write_log(tmp_path, aws, "r")
    code = main(["verify", f"s3://{aws['bucket']}/r", "--kms-key-id", aws["sign_key"], "--endpoint-url",
                 aws["url"], "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["macs_checked"] == 0
