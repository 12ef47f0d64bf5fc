"""Opening the audit log from Warden's configuration (the wiring only; the log itself is `audit/`).

With `--workers N` (N > 1) every worker writes its own chain: `<audit_dir>/worker-<i>/`, its origin's boot id
naming the worker (`w<i>-<random>`), all sharing one key directory (`<audit_dir>/../keys` by default, as for
one process) so that input digests agree across workers and one `--key-dir` verifies them all.
`warden audit verify <audit_dir>` finds the N logs (audit/fleet.py) and verifies them together. A restarted
worker reopens its own directory: recovery cuts a torn tail and anchors what the dead process left unanchored,
and the new boot links to its last checkpoint, as after any crash.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

from audit import AuditConfig, AuditLog, Origin, aws_config
from audit.config import KEY_DIR_NAME
from audit.errors import ConfigError
from audit.keys import CHAIN_KEY_FILE, DIGEST_KEY_FILE, LocalKeyProvider, load_or_create_hex_key
from audit.signers import SIGNING_KEY_FILE, LocalSigner
from proxy.config import WardenConfig

WORKER_DIR = "worker-{index}"


def worker_boot_id(index: int) -> str:
    return f"w{index}-{secrets.token_hex(8)}"


def open_audit(config: WardenConfig, env: Mapping[str, str] | None = None,
               worker: int | None = None) -> AuditLog | None:
    """None when audit is off. Raises audit's errors when the log cannot be written safely (fail closed).
    `worker`: the index of a worker of `--workers N`, whose `config` is already `worker_config`'s."""
    if not config.audit_dir:
        return None
    env = os.environ if env is None else env
    directory = Path(config.audit_dir)
    # The one function that makes an origin from the pod (audit/config.py); the cluster as configuration resolved it.
    origin = Origin.from_env(env, cluster=config.cluster)
    if worker is not None:
        origin = dataclasses.replace(origin, boot_id=worker_boot_id(worker))
    key_dir = Path(config.audit_key_dir) if config.audit_key_dir else None
    s3_url = s3_url_for(config.audit_s3, origin) if config.audit_s3 else None
    if s3_url or config.audit_kms_data_key or config.audit_kms_sign_key:
        audit_config = aws_config(
            directory, origin=origin, s3_url=s3_url, data_key_id=config.audit_kms_data_key,
            signing_key_id=config.audit_kms_sign_key, endpoint_url=config.aws_endpoint_url, key_dir=key_dir,
        )
    else:
        audit_config = AuditConfig(directory=directory, origin=origin, key_dir=key_dir)
    return AuditLog.open(audit_config)


S3_PLACEHOLDERS = ("cluster", "namespace", "pod")


def s3_url_for(template: str, origin: Origin) -> str:
    """The pod's own mirror prefix: `{cluster}`, `{namespace}` and `{pod}` in `--audit-s3` become the origin's
    parts. Pods sharing one setting (a ConfigMap, the same Deployment) must not share a prefix: each log's
    segment and checkpoint names start again at 0, so they would collide under Object Lock and no log could
    be verified. Anything else in braces is refused, so a typo is not written to S3 as a literal key."""
    out, rest = [], template
    while "{" in rest:
        head, _, tail = rest.partition("{")
        name, closed, after = tail.partition("}")
        if not closed or name not in S3_PLACEHOLDERS:
            raise ConfigError(f"--audit-s3: unknown placeholder {{{name}}} (use {{cluster}}, {{namespace}}, "
                              "{pod})", found=template)
        out += [head, getattr(origin, name)]
        rest = after
    return "".join(out) + rest


def pod_key_dir(config: WardenConfig) -> Path:
    """The key directory one process would use: `audit_key_dir`, else `<audit_dir>/../keys`."""
    assert config.audit_dir
    if config.audit_key_dir:
        return Path(config.audit_key_dir)
    return Path(config.audit_dir).absolute().parent / KEY_DIR_NAME


def worker_config(config: WardenConfig, index: int) -> WardenConfig:
    """The audit part of worker `index`'s configuration: its own log directory, the pod's key directory, its
    own S3 prefix under the pod's."""
    if not config.audit_dir:
        return config
    s3 = f"{config.audit_s3.rstrip('/')}/{WORKER_DIR.format(index=index)}" if config.audit_s3 else None
    return dataclasses.replace(config, audit_dir=str(Path(config.audit_dir) / WORKER_DIR.format(index=index)),
                               audit_key_dir=str(pod_key_dir(config)), audit_s3=s3)


def prepare_keys(config: WardenConfig) -> None:
    """Create the local keys once, before the workers start: each worker would otherwise race the others to
    create them (one could read a key file another has created but not yet written)."""
    if not config.audit_dir:
        return
    key_dir = pod_key_dir(config)
    key_dir.mkdir(parents=True, exist_ok=True)
    load_or_create_hex_key(key_dir / DIGEST_KEY_FILE)
    if not config.audit_kms_data_key:
        LocalKeyProvider.from_file(key_dir / CHAIN_KEY_FILE, create=True)
    if not config.audit_kms_sign_key:
        LocalSigner.from_file(key_dir / SIGNING_KEY_FILE, create=True)
