"""A log written by an earlier version of the writer still verifies, and the writer still writes it byte for byte.

`testdata/golden-log/` was written by `write_golden(...)` below at commit 4211aee (before `audit/log.py` was
split into config, writer, roller and recovery). Every input that is random in production is fixed here: the
clock, the log id, the epoch keys (wrapped like the local provider does, with a key and nonce derived from the
context), the signature (RFC 6979 deterministic ECDSA), the digest key. The scenario covers three boots, a
manual, a heartbeat, an interval, a shutdown and a recovery checkpoint, an epoch rotation and a torn tail cut
on restart.

Regenerate (only when the on-disk format is meant to change, which breaks old logs):
    .venv/bin/python -c "from pathlib import Path; from tests.audit.test_golden_log import regenerate; \\
        regenerate(Path('tests/audit/testdata/golden-log'))"
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from audit.canonical import encode
from audit.keys import EpochKey, LocalKeyProvider, Unwrapper
from audit.log import AuditConfig, AuditLog, Origin
from audit.signers import KeyRing, fingerprint, public_der
from audit.stores import DirectorySource
from audit.verify import Outcome, verify
from tests.audit.conftest import abandon

GOLDEN = Path(__file__).parent / "testdata" / "golden-log"
MASTER_KEY = hashlib.sha256(b"warden golden log: chain master key").digest()
DIGEST_KEY = hashlib.sha256(b"warden golden log: digest key").digest()
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
SIGNING_KEY = ec.derive_private_key(
    int.from_bytes(hashlib.sha256(b"warden golden log: signing key").digest()) % (_P256_ORDER - 1) + 1,
    ec.SECP256R1())
START = 1_800_000_000.0


class FixedKeys:
    """The local provider's wrapping (AES-256-GCM, context as associated data), minus its randomness."""

    name = "local"

    def __init__(self) -> None:
        self._aead = AESGCM(MASTER_KEY)
        self.key_id = LocalKeyProvider(MASTER_KEY).key_id

    def new_key(self, context: Mapping[str, str]) -> EpochKey:
        aad = encode(dict(context))
        key = hmac.digest(MASTER_KEY, b"key\x00" + aad, "sha256")
        nonce = hmac.digest(MASTER_KEY, b"nonce\x00" + aad, "sha256")[:12]
        wrapped = nonce + self._aead.encrypt(nonce, key, aad)
        return EpochKey(key, {"provider": self.name, "key_id": self.key_id,
                              "wrapped": base64.b64encode(wrapped).decode("ascii"), "context": dict(context)})

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        return LocalKeyProvider(MASTER_KEY).unwrap(descriptor)


class FixedSigner:
    """ECDSA P-256 / SHA-256 like LocalSigner, deterministic (RFC 6979) so checkpoint files repeat exactly."""

    def __init__(self) -> None:
        self.public_key_der = public_der(SIGNING_KEY.public_key())
        self.fingerprint = fingerprint(self.public_key_der)

    def sign(self, message: bytes) -> bytes:
        return SIGNING_KEY.sign(message, ec.ECDSA(hashes.SHA256(), deterministic_signing=True))


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def _until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.005)


@contextmanager
def _fixed_log_id() -> Iterator[None]:
    """The log id is the one value `AuditLog.open` draws itself (secrets.token_hex, once per new log)."""
    original = secrets.token_hex
    secrets.token_hex = lambda nbytes=None: "60" * (nbytes or 32)
    try:
        yield
    finally:
        secrets.token_hex = original


def write_golden(root: Path) -> None:
    """The scenario: writes `root/log` (the verified directory) and `root/log-quarantine` (the cut tail)."""
    directory = root / "log"
    clock = Clock()

    def open_boot(boot: str) -> AuditLog:
        return AuditLog.open(AuditConfig(
            directory=directory, origin=Origin("golden", "ns", "pod-0", boot), key_dir=root / "keys",
            key_provider=FixedKeys(), signer=FixedSigner(), digest_key=DIGEST_KEY, checkpoint_interval=300.0,
            heartbeat_interval=600.0, epoch_interval=1800.0, tick=0.005, clock=clock))

    def exchange(log: AuditLog, i: int) -> None:
        log.append("exchange", {
            "exchange": {"request_id": f"req-{i:03d}", "route": "chat", "status": 200, "latency_ms": 10 + i},
            "digests": {"input": log.digest(b"prompt %d" % i), "output": log.digest(b"answer %d" % i)},
            "verdicts": {"pii": "mask" if i % 3 == 0 else "pass"}, "findings": {"email": i % 2},
            "note": "non-ASCII \u00e9\u4e2d \"quoted\" \\ end"})

    with _fixed_log_id():
        # Boot 1: a manual checkpoint, a heartbeat checkpoint, an epoch rotation, a clean shutdown.
        log = open_boot("boot1")
        for i in range(3):
            exchange(log, i)
        assert log.checkpoint_now(10)
        clock.now += 601  # idle past the heartbeat interval: heartbeat record + checkpoint
        _until(lambda: log.head is not None and log.head.reason == "heartbeat")
        clock.now += 1200  # past the epoch interval: a new chain key, anchored at once (interval)
        _until(lambda: log.head is not None and log.head.reason == "interval")
        for i in range(3, 6):
            exchange(log, i)
        assert log.close(10)
        # Boot 2: linked to boot 1's last checkpoint; crashes with an unanchored tail and a torn last line.
        clock.now += 5
        log = open_boot("boot2")
        for i in range(6, 9):
            exchange(log, i)
        assert log.checkpoint_now(10)
        for i in range(9, 11):
            exchange(log, i)
        assert log.flush(10)
        abandon(log)
        segment = sorted((directory / "segments").iterdir())[-1]
        segment.chmod(0o644)
        with segment.open("ab") as fh:
            fh.write(b'{"_mac":"0123456789abcdef0123456789abcdef","kind":"exch')
        # Boot 3: recovery cuts the torn line, anchors boot 2's tail, links to that checkpoint.
        clock.now += 5
        log = open_boot("boot3")
        exchange(log, 11)
        assert log.close(10)


def regenerate(target: Path) -> None:
    if target.exists():
        shutil.rmtree(target)
    write_golden(target)
    shutil.rmtree(target / "keys", ignore_errors=True)  # the fixed providers write no keys; keep it so


def files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_golden_log_still_verifies() -> None:
    ring = KeyRing()
    ring.add(SIGNING_KEY.public_key())
    report = verify(DirectorySource(GOLDEN / "log"), ring, Unwrapper([LocalKeyProvider(MASTER_KEY)]), strict=True)
    assert report.outcome == Outcome.VALID and report.problems == (), report.problems
    assert (report.records, report.macs_checked, report.boots, report.epochs) == (19, 19, 3, 4)
    assert (report.checkpoints, report.head_n) == (7, 6)
    assert dict(report.kinds) == {"epoch_start": 4, "exchange": 12, "heartbeat": 1, "shutdown": 2}


def test_the_writer_still_writes_the_golden_log_byte_for_byte(tmp_path: Path) -> None:
    write_golden(tmp_path)
    shutil.rmtree(tmp_path / "keys", ignore_errors=True)
    written, golden = files(tmp_path), files(GOLDEN)
    assert sorted(written) == sorted(golden)
    for name, data in golden.items():
        assert written[name] == data, name


@pytest.mark.parametrize("name", ["log/segments", "log/checkpoints", "log-quarantine"])
def test_the_golden_log_has_every_part(name: str) -> None:
    assert any((GOLDEN / name).iterdir())
