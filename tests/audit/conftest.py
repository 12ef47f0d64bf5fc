"""Shared builders: a small real log on disk (two boots, several checkpoints) and a verify helper."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from audit.keys import KeyProvider, LocalKeyProvider, Unwrapper
from audit.log import AuditConfig, AuditLog, Origin
from audit.signers import KeyRing
from audit.stores import DirectorySource
from audit.verify import Report, verify


@dataclass(frozen=True)
class Built:
    root: Path
    directory: Path
    keys: Path

    @property
    def public_key(self) -> Path:
        return self.keys / "signing.pub.pem"

    @property
    def chain_key(self) -> Path:
        return self.keys / "chain.key"

    def segments(self) -> list[Path]:
        return sorted((self.directory / "segments").iterdir())

    def checkpoints(self) -> list[Path]:
        return sorted((self.directory / "checkpoints").iterdir())


def config(directory: Path, boot: str, **kwargs: object) -> AuditConfig:
    defaults: dict[str, object] = {"checkpoint_interval": 3600.0, "heartbeat_interval": 3600.0, "tick": 0.01}
    defaults.update(kwargs)
    return AuditConfig(directory=directory, origin=Origin("test", "ns", "pod-0", boot), **defaults)  # type: ignore[arg-type]


def exchange(i: int) -> dict[str, object]:
    return {"exchange": {"request_id": f"req-{i:05d}", "route": "chat", "status": 200, "latency_ms": 12},
            "digests": {"input": "00" * 32, "output": "11" * 32}, "verdicts": {"pii": "pass"},
            "findings": {}}


def build(root: Path, *, boots: int = 2, checkpoints_per_boot: int = 3, records: int = 4,
          close_last: bool = True, **options: object) -> Built:
    """`options` go to every boot's AuditConfig (a key provider, say)."""
    directory = root / "log"
    counter = 0
    for b in range(boots):
        log = AuditLog.open(config(directory, f"boot{b}", **options))
        for _ in range(checkpoints_per_boot):
            for _ in range(records):
                log.append("exchange", exchange(counter))
                counter += 1
            assert log.checkpoint_now(10)
        if b < boots - 1 or close_last:
            assert log.close(10)
        else:
            for _ in range(records):  # an unanchored tail, then a "crash"
                log.append("exchange", exchange(counter))
                counter += 1
            assert log.flush(10)
            abandon(log)
    return Built(root, directory, root / "keys")


def abandon(log: AuditLog) -> None:
    """Stop the threads without the shutdown record and final checkpoint (a crash, as far as disk goes)."""
    log._stop_roller = True
    log._roller_wake.set()
    log._roller_thread.join(5)
    with log._lock:
        log._stop_writer = True
        log._work.notify_all()
    log._writer_thread.join(5)
    if log._seg_file is not None:
        log._seg_file.close()
        log._seg_file = None


def run_verify(built: Built, *, mac_key: bool = True, public_key: bool = True,
               providers: list[KeyProvider] | None = None, **kwargs: object) -> Report:
    """Verify with the log's public key and chain key (or `providers` for the chain keys)."""
    ring = KeyRing()
    if public_key:
        ring.add_bytes(built.public_key.read_bytes())
    if providers is None:
        providers = [LocalKeyProvider.from_file(built.chain_key)] if mac_key else []
    unwrapper = Unwrapper(providers)
    return verify(DirectorySource(built.directory), ring, unwrapper, **kwargs)  # type: ignore[arg-type]


def writable(path: Path) -> Path:
    os.chmod(path, 0o644)
    return path


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build(tmp_path)
