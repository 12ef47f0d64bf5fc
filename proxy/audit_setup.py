"""Opening the audit log from Warden's configuration (the wiring only; the log itself is `audit/`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from audit import AuditConfig, AuditLog, Origin, aws_config
from proxy.config import WardenConfig


def open_audit(config: WardenConfig, env: Mapping[str, str] | None = None) -> AuditLog | None:
    """None when audit is off. Raises audit's errors when the log cannot be written safely (fail closed)."""
    if not config.audit_dir:
        return None
    env = os.environ if env is None else env
    directory = Path(config.audit_dir)
    # The one function that makes an origin from the pod (audit/config.py); the cluster as configuration resolved it.
    origin = Origin.from_env(env, cluster=config.cluster)
    key_dir = Path(config.audit_key_dir) if config.audit_key_dir else None
    if config.audit_s3 or config.audit_kms_data_key or config.audit_kms_sign_key:
        audit_config = aws_config(
            directory, origin=origin, s3_url=config.audit_s3, data_key_id=config.audit_kms_data_key,
            signing_key_id=config.audit_kms_sign_key, endpoint_url=config.aws_endpoint_url, key_dir=key_dir,
        )
    else:
        audit_config = AuditConfig(directory=directory, origin=origin, key_dir=key_dir)
    return AuditLog.open(audit_config)
