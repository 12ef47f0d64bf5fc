"""One worker of `warden serve --workers N`: a whole Warden (its own pipeline, metrics, audit chain) in its own
process, accepting on the listening sockets the supervisor bound (proxy/supervisor.py).

Started as `python -m proxy.workers` with a `WorkerSpec` (pickled) on stdin and the listening sockets among
its descriptors. It writes STARTED on stdout once it accepts; its admin endpoint (/healthz, /readyz,
/metrics) is a private Unix socket the supervisor reads. Signals as for one process: SIGTERM drains, SIGHUP
reloads the rules; its logs carry `"worker": <index>`. It asks the kernel for SIGTERM when the supervisor
dies, so a killed supervisor leaves no worker holding the port.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import pickle
import signal
import socket
import sys
from dataclasses import dataclass

from audit.errors import AuditError
from models.errors import ModelsError
from proxy.config import WardenConfig
from proxy.exceptions import ProxyError
from proxy.serve import EXIT_CONFIG, build_services, started
from proxy.server import WardenProxy
from proxy.telemetry.logs import setup_logging
from rules.errors import RulesError

STARTED = b"started\n"
PR_SET_PDEATHSIG = 1
log = logging.getLogger("warden.worker")


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    index: int
    config: WardenConfig  # the worker's own: its audit directory, its share of max_inflight (supervisor.py)
    listen_fds: tuple[int, ...]
    admin_socket: str
    parent: int  # the supervisor's pid


class WorkerTag(logging.Filter):
    def __init__(self, index: int) -> None:
        super().__init__()
        self.index = index

    def filter(self, record: logging.LogRecord) -> bool:
        record.worker = self.index
        return True


def die_with_parent(parent: int) -> None:
    """SIGTERM (drain) when the supervisor dies (Linux prctl; elsewhere the worker outlives it)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # it died before the request took effect
        os.kill(os.getpid(), signal.SIGTERM)


class EarlySignals:
    """Signals that arrive while the worker starts (loading rules and the model takes seconds), before the proxy's
    own handlers exist: SIGHUP's default action would kill it, and a SIGTERM would leave its audit chain without
    its shutdown record. They are remembered and acted on once it serves."""

    def __init__(self) -> None:
        self.stop = False
        self.reload = False
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._note)

    def _note(self, sig: int, frame: object) -> None:
        if sig == signal.SIGHUP:
            self.reload = True
        else:
            self.stop = True


async def run_worker(spec: WorkerSpec, early: EarlySignals | None = None) -> int:
    try:
        services = build_services(spec.config, worker=spec.index)
    except (ProxyError, RulesError, AuditError, ModelsError, ValueError) as exc:
        log.error("cannot start: %s", exc)
        return EXIT_CONFIG
    sockets = [socket.socket(fileno=fd) for fd in spec.listen_fds]
    proxy = WardenProxy(services, listen_sockets=sockets, admin_unix=spec.admin_socket)
    if not await started(proxy, services):
        return 1
    os.write(sys.stdout.fileno(), STARTED)
    if early is not None and early.reload:
        proxy.request_reload()  # the rule files may have changed after this worker read them
    if early is not None and early.stop:
        proxy.request_stop()
    log.info("worker serving", extra={"pid": os.getpid(),
                                      "audit_origin": services.audit.origin if services.audit else None})
    await proxy.serve_until_stopped()
    return 0


def main() -> int:
    spec = pickle.loads(sys.stdin.buffer.read())  # noqa: S301 - written by our own supervisor into our stdin pipe
    if not isinstance(spec, WorkerSpec):
        raise SystemExit("proxy.workers: expected a WorkerSpec on stdin")
    early = EarlySignals()
    die_with_parent(spec.parent)
    setup_logging(spec.config.log_level)
    for handler in logging.getLogger().handlers:
        handler.addFilter(WorkerTag(spec.index))
    return asyncio.run(run_worker(spec, early))


if __name__ == "__main__":
    # Through the module's import name: the pickled WorkerSpec is `proxy.workers.WorkerSpec`, not `__main__`'s.
    from proxy.workers import main as worker_main

    sys.exit(worker_main())
