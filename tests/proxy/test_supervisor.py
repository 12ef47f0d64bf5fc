"""proxy/supervisor.py: the pieces of `--workers N` that need no worker process (tests/e2e/test_workers.py runs
the whole tree)."""

from __future__ import annotations

import asyncio
import errno
import socket
from pathlib import Path

import pytest

from proxy.admin import AdminServer, Readiness
from proxy.config import HostPort, resolve
from proxy.supervisor import ask, bind_listeners, quorum, worker_share
from proxy.telemetry.metrics import Metrics


def test_a_quorum_is_more_than_half() -> None:
    assert [quorum(n) for n in (1, 2, 3, 4, 8)] == [1, 2, 2, 3, 5]


def test_each_worker_gets_its_share_of_the_pods_limits_and_its_own_chain(tmp_path: Path) -> None:
    config = resolve({"upstream": "http://127.0.0.1:8000", "max_inflight": "256", "max_queue": "63",
                      "audit_dir": str(tmp_path / "audit"), "audit_s3": "s3://bucket/pods/p1"}, env={})
    one = worker_share(config, 3, 1)
    assert (one.max_inflight, one.max_queue, one.workers) == (86, 21, 1)
    assert one.audit_dir == str(tmp_path / "audit" / "worker-1")
    assert one.audit_key_dir == str(tmp_path / "keys")  # where one process keeps them: outside the shipped logs
    assert one.audit_s3 == "s3://bucket/pods/p1/worker-1"


def test_the_port_is_bound_once_and_in_use_is_reported() -> None:
    sockets = bind_listeners(HostPort("127.0.0.1", 0))
    try:
        assert len(sockets) == 1 and sockets[0].getsockname()[1] > 0
        port = sockets[0].getsockname()[1]
        with pytest.raises(OSError) as caught:
            bind_listeners(HostPort("127.0.0.1", port))
        assert caught.value.errno == errno.EADDRINUSE
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass  # queued in the shared backlog until a worker accepts
    finally:
        for sock in sockets:
            sock.close()


def test_a_workers_private_admin_socket_needs_no_token(tmp_path: Path) -> None:
    config = resolve({"upstream": "http://127.0.0.1:9", "admin_token": "s3cret-token"}, env={})
    path = str(tmp_path / "w0.sock")

    async def scenario() -> tuple[tuple[int, bytes], tuple[int, bytes]]:
        admin = AdminServer(config, Metrics(), Readiness(config), unix_path=path)
        await admin.start()
        try:
            return await ask(path, "/healthz"), await ask(path, "/metrics")
        finally:
            await admin.close()

    health, metrics = asyncio.run(scenario())
    assert health == (200, b"ok\n")
    assert metrics[0] == 200 and b"warden_inflight_requests" in metrics[1]
