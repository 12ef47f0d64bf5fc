"""proxy/audit_setup.py: the audit log as the proxy opens it, and the origin it writes under."""

from __future__ import annotations

from pathlib import Path

from audit import Origin
from proxy.audit_setup import open_audit
from proxy.config import resolve

POD = {"POD_NAMESPACE": "llm", "POD_NAME": "vllm-0", "WARDEN_CLUSTER": "prod-eu"}


def test_audit_is_off_without_a_directory() -> None:
    assert open_audit(resolve({"upstream": "http://127.0.0.1:8000"}, env={}), env=POD) is None


def test_the_origin_is_made_by_the_one_pod_origin_function(tmp_path: Path) -> None:
    """Namespace and pod from the downward API, the cluster as configuration resolved it (the flag wins over
    WARDEN_CLUSTER), a fresh boot id: what `Origin.from_env` gives, since it is the only maker."""
    config = resolve({"upstream": "http://127.0.0.1:8000", "audit_dir": str(tmp_path / "audit"),
                      "cluster": "flagged"}, env=POD)
    log = open_audit(config, env=POD)
    assert log is not None
    try:
        cluster, namespace, pod, boot = log.origin.split("/")
        assert (cluster, namespace, pod) == ("flagged", "llm", "vllm-0") and boot
    finally:
        log.close(10.0)
    from_env = Origin.from_env(POD)
    assert (from_env.cluster, from_env.namespace, from_env.pod) == ("prod-eu", "llm", "vllm-0")
    assert Origin.from_env(POD, cluster="flagged").cluster == "flagged"


def test_a_worker_writes_its_own_chain_named_in_its_origin(tmp_path: Path) -> None:
    """`--workers N`: worker i logs to <audit_dir>/worker-<i>/ with a boot id naming it, keys shared and made
    once beforehand (proxy/supervisor.py)."""
    from proxy.audit_setup import prepare_keys
    from proxy.supervisor import worker_share

    config = resolve({"upstream": "http://127.0.0.1:8000", "audit_dir": str(tmp_path / "audit")}, env=POD)
    prepare_keys(config)
    assert sorted(p.name for p in (tmp_path / "keys").iterdir()) == [
        "chain.key", "digest.key", "signing.pem", "signing.pub.pem"]
    digests = []
    for index in (0, 1):
        log = open_audit(worker_share(config, 2, index), env=POD, worker=index)
        assert log is not None
        try:
            assert log.directory == tmp_path / "audit" / f"worker-{index}"
            assert log.origin.split("/")[3].startswith(f"w{index}-")
            digests.append(log.digest(b"same prompt"))
        finally:
            log.close(10.0)
    assert digests[0] == digests[1]  # one digest key for the pod: the same input has the same digest


def test_the_s3_prefix_names_the_pod() -> None:
    """Pods sharing one `--audit-s3` setting get their own prefixes: their logs' object names start at 0 alike."""
    import pytest

    from audit.errors import ConfigError
    from proxy.audit_setup import s3_url_for

    origin = Origin.from_env(POD)
    assert s3_url_for("s3://b/audit/{cluster}/{namespace}/{pod}", origin) == "s3://b/audit/prod-eu/llm/vllm-0"
    assert s3_url_for("s3://b/audit", origin) == "s3://b/audit"
    for bad in ("s3://b/{pods}", "s3://b/{pod"):
        with pytest.raises(ConfigError):
            s3_url_for(bad, origin)
