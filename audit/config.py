"""What the audit log is configured with: who writes (`Origin`), where and how (`AuditConfig`), AWS wiring."""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from audit.errors import ConfigError
from audit.keys import KeyProvider, KmsKeyProvider
from audit.signers import KmsSigner, Signer
from audit.stores import S3Store, Store

KEY_DIR_NAME = "keys"
_ORIGIN_PART_FORBIDDEN = frozenset("/\n\r\t ")


def _new_boot_id() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Origin:
    """Who wrote a record: cluster/namespace/pod/boot id. A fresh boot id per process start."""

    cluster: str = "local"
    namespace: str = "default"
    pod: str = field(default_factory=socket.gethostname)
    boot_id: str = field(default_factory=_new_boot_id)

    def __post_init__(self) -> None:
        for name in ("cluster", "namespace", "pod", "boot_id"):
            value = getattr(self, name)
            if not value or _ORIGIN_PART_FORBIDDEN & set(value):
                raise ConfigError("origin parts must be non-empty without '/' or whitespace", where=name,
                                  found=value)

    def __str__(self) -> str:
        return f"{self.cluster}/{self.namespace}/{self.pod}/{self.boot_id}"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, *, cluster: str | None = None) -> Origin:
        """From the usual pod environment: WARDEN_CLUSTER, POD_NAMESPACE, POD_NAME (downward API), else
        the host name; a fresh boot id. The one place an origin is made from a pod (DESIGN section 7): the proxy
        passes `cluster` as its configuration resolved it (flag, WARDEN_CLUSTER or config file)."""
        env = os.environ if environ is None else environ
        return cls(cluster=cluster or env.get("WARDEN_CLUSTER") or "local",
                   namespace=env.get("POD_NAMESPACE") or "default", pod=env.get("POD_NAME") or socket.gethostname())


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """Everything the log needs; the defaults need no network and no configuration.

    `directory` is the local log (segments are group-committed there; it is also the default store).
    `key_dir` defaults to `<directory>/../keys`, holding `chain.key`, `digest.key`, `signing.pem` and
    `signing.pub.pem`, created on first use. `store` is an extra write-once mirror such as `S3Store`.
    """

    directory: Path
    origin: Origin = field(default_factory=Origin)
    key_dir: Path | None = None
    key_provider: KeyProvider | None = None
    signer: Signer | None = None
    store: Store | None = None
    digest_key: bytes | None = None
    batch_window: float = 0.002
    max_batch: int = 8192
    checkpoint_interval: float = 5.0
    heartbeat_interval: float = 60.0
    epoch_interval: float = 3600.0
    retry_initial: float = 0.5
    retry_max: float = 30.0
    tick: float = 0.05
    fsync: bool = True
    clock: Callable[[], float] = time.time

    def resolved_key_dir(self) -> Path:
        return self.key_dir if self.key_dir is not None else self.directory.absolute().parent / KEY_DIR_NAME


def aws_config(directory: Path, *, origin: Origin, s3_url: str | None = None, data_key_id: str | None = None,
               signing_key_id: str | None = None, endpoint_url: str | None = None, region: str | None = None,
               retention_days: int = 365, **options: object) -> AuditConfig:
    """Production wiring, each part optional: KMS GenerateDataKey for K_epoch (`data_key_id`), KMS Sign
    (`signing_key_id`, an ECC_NIST_P256 SIGN_VERIFY key), and an S3 Object Lock mirror (`s3_url`,
    s3://bucket/prefix). Contacts AWS now, so a missing key or an unlocked bucket fails at start-up."""
    return AuditConfig(
        directory=directory, origin=origin,
        key_provider=KmsKeyProvider(data_key_id, endpoint_url=endpoint_url, region=region) if data_key_id
        else None,
        signer=KmsSigner(signing_key_id, endpoint_url=endpoint_url, region=region) if signing_key_id else None,
        store=S3Store.from_url(s3_url, retention_days=retention_days, endpoint_url=endpoint_url, region=region)
        if s3_url else None,
        **options)  # type: ignore[arg-type]
