"""`warden serve --workers N` (N > 1): N worker processes behind one listening port and one admin port.

One process is one asyncio loop on one core (issue 26); a worker per core lets Warden keep up with a model
server that streams tens of thousands of events a second. The supervisor serves no traffic itself:

- **Listening**: it binds `listen` once (as asyncio would: every address the host resolves to, backlog 100)
  and hands the same sockets to every worker, which accept on them (proxy/mitm/listener.py). Chosen over
  SO_REUSEPORT: with one shared accept queue a dead or restarting worker loses no queued connection (a
  SO_REUSEPORT socket's queue is reset when its process dies), no other process of the same user can join the
  port, "address in use" is reported once before any worker starts, and an idle worker accepts first, where
  SO_REUSEPORT hashes connections to workers whatever their load.
- **Workers** (proxy/workers.py) each build their own services (rules, model, metrics, audit chain) and
  receive `max_inflight` and `max_queue` divided among them, so the limits stay the pod's. A worker that dies
  is restarted after a backoff (0.5 s doubling to 30 s, back to 0.5 s after it ran STABLE_SECONDS), logged,
  and counted in `warden_worker_restarts_total{worker}`. A worker that exits before every worker has started
  once is a start-up failure: everything stops and `warden serve` exits with its code (78 for a bad config).
- **Admin port** (the pod's only one): `/metrics` merges the workers' (proxy/telemetry/aggregate.py), plus
  the supervisor's own worker series and the upstream's health and merged metrics, asked once for the pod;
  `/readyz` is ready when the upstream answers, the pod is not draining and a quorum (more than half: both of
  2, 3 of 4, 5 of 8) of workers answer on their private admin socket; `/healthz` answers while the supervisor
  runs. It opens once every worker has started, as one process opens it after its start-up.
- **Signals**: SIGTERM/SIGINT drain every worker (each drains as one process does, within `drain_grace`, and
  closes its audit chain); SIGHUP is passed to every worker, which reloads its rules.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import math
import os
import pickle
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, disable_created_metrics, generate_latest
from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from audit.errors import AuditError
from proxy.admin import AdminServer, Readiness, with_admin_token
from proxy.audit_setup import prepare_keys, worker_config
from proxy.config import ConfigError, HostPort, WardenConfig
from proxy.telemetry.aggregate import Merger, exposition, parse, requests_of
from proxy.telemetry.metrics import SCRAPE_HOOK_SECONDS
from proxy.telemetry.upstream_metrics import UpstreamHealth, UpstreamMetrics, metrics_url
from proxy.workers import STARTED, WorkerSpec

log = logging.getLogger("warden.supervisor")

EXIT_CONFIG = 78
LISTEN_BACKLOG = 100  # asyncio.start_server's default: what one process has
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 30.0
STABLE_SECONDS = 30.0
SNAPSHOT_SECONDS = 10.0  # a dead worker's counters are kept as of its last snapshot at most this old
ASK_SECONDS = 3.0  # one question to a worker's private admin socket
START_SECONDS = 300.0  # the semantic model takes seconds per worker; a worker silent longer is failed
STOP_MARGIN = 20.0  # after drain_grace: the master's stop (10 s) and the audit log's close (10 s)


def quorum(workers: int) -> int:
    return workers // 2 + 1


def bind_listeners(listen: HostPort, backlog: int = LISTEN_BACKLOG) -> list[socket.socket]:
    """Bound, listening sockets for every address `listen.host` resolves to (asyncio's rule, which one process
    follows through mitmproxy); raises OSError (address in use, no such host)."""
    infos = socket.getaddrinfo(listen.host or None, listen.port, socket.AF_UNSPEC, socket.SOCK_STREAM,
                               0, socket.AI_PASSIVE)
    sockets: list[socket.socket] = []
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.bind(address)
            sock.listen(backlog)
            sock.setblocking(False)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def worker_share(config: WardenConfig, workers: int, index: int) -> WardenConfig:
    """Worker `index`'s configuration: its audit chain, its share of the pod's admission limits."""
    return dataclasses.replace(
        worker_config(config, index), workers=1,
        max_inflight=math.ceil(config.max_inflight / workers), max_queue=math.ceil(config.max_queue / workers),
    )


async def ask(path: str, target: str, timeout: float = ASK_SECONDS) -> tuple[int, bytes]:
    """GET `target` from a worker's private admin socket: (status, body)."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_unix_connection(path)
        try:
            writer.write(f"GET {target} HTTP/1.1\r\nHost: worker\r\nConnection: close\r\n\r\n".encode())
            writer.write_eof()
            data = await reader.read()
        finally:
            writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    parts = head.split(b" ", 2)
    if len(parts) < 2 or not parts[1].isdigit():
        raise ConnectionError(f"not an HTTP answer from {path}")
    return int(parts[1]), body


@dataclasses.dataclass(slots=True)
class Slot:
    index: int
    admin_socket: str
    proc: asyncio.subprocess.Process | None = None
    up: bool = False
    spawned_at: float = 0.0
    restarts: int = 0
    snapshot: list[Metric] = dataclasses.field(default_factory=list)
    retired_requests: float = 0.0


class WorkerRequests(Collector):
    """`warden_worker_requests_total{worker}`: exchanges each worker slot handled (its warden_requests_total,
    across restarts): how the shared listening socket spreads the load. Set at each scrape."""

    def __init__(self, workers: int) -> None:
        self.values = dict.fromkeys(range(workers), 0.0)

    def describe(self) -> Iterable[Metric]:
        return []

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily("warden_worker_requests", "Exchanges each worker slot handled, across its "
                                     "restarts (the workers' warden_requests_total, per worker).", labels=["worker"])
        for index, value in sorted(self.values.items()):
            family.add_metric([str(index)], value)
        yield family


class SupervisorMetrics:
    """The supervisor's own series, and the upstream's (asked once for the pod, not once per worker)."""

    def __init__(self, config: WardenConfig, readiness: Readiness, workers: int) -> None:
        disable_created_metrics()
        self.registry = r = CollectorRegistry(auto_describe=True)
        Gauge("warden_workers", "Worker processes configured (warden serve --workers).", registry=r).set(workers)
        self.up = Gauge("warden_worker_up", "1 while the worker process runs and has started serving.",
                        ["worker"], registry=r)
        self.restarts = Counter("warden_worker_restarts", "Worker processes restarted after they exited.",
                                ["worker"], registry=r)
        self.requests = WorkerRequests(workers)
        r.register(self.requests)
        for i in range(workers):
            self.up.labels(str(i)).set(0)
            self.restarts.labels(str(i))
        self.health = UpstreamHealth(readiness.upstream)
        r.register(self.health)
        self.hooks = [self.health.refresh]
        if config.upstream_metrics:
            merged = UpstreamMetrics(metrics_url(config.upstream, config.upstream_metrics),
                                     config.upstream_metrics_prefixes, verify_tls=config.upstream_verify)
            r.register(merged)
            self.hooks.append(merged.refresh)


class PodReadiness:
    def __init__(self, supervisor: Supervisor) -> None:
        self.supervisor = supervisor
        self.draining = False

    async def check(self) -> tuple[bool, str]:
        if self.draining:
            return False, "draining"
        sup = self.supervisor
        (upstream_ok, reason), ready = await asyncio.gather(sup.readiness.upstream(), sup.workers_ready())
        need = quorum(len(sup.slots))
        workers = f"{ready}/{len(sup.slots)} workers ready (need {need})"
        return upstream_ok and ready >= need, f"{workers}; {reason}"


class PodMetrics:
    def __init__(self, supervisor: Supervisor) -> None:
        self.supervisor = supervisor
        self._lock = asyncio.Lock()

    async def exposition(self) -> bytes:
        sup = self.supervisor
        async with self._lock:
            hooks = [asyncio.wait_for(hook(), SCRAPE_HOOK_SECONDS) for hook in sup.metrics.hooks]
            await asyncio.gather(sup.snapshot(), *hooks, return_exceptions=True)
            families = sup.merger.merge(slot.snapshot for slot in sup.slots if slot.up)
            for slot in sup.slots:
                live = requests_of(slot.snapshot) if slot.up else 0.0
                sup.metrics.requests.values[slot.index] = slot.retired_requests + live
            return generate_latest(sup.metrics.registry) + exposition(families)


class Supervisor:
    def __init__(self, config: WardenConfig, workers: int, python: str = sys.executable) -> None:
        self.config = config
        self.workers = workers
        self.python = python
        self.readiness = Readiness(config)
        self.metrics = SupervisorMetrics(config, self.readiness, workers)
        self.merger = Merger()
        self.pod_readiness = PodReadiness(self)
        self.admin = AdminServer(config, PodMetrics(self), self.pod_readiness)
        self._dir = tempfile.mkdtemp(prefix="warden-workers-")  # 0700: the workers' admin sockets
        self.slots = [Slot(i, os.path.join(self._dir, f"w{i}.sock")) for i in range(workers)]
        self.sockets: list[socket.socket] = []
        self._stopping = asyncio.Event()
        self._failed: int | None = None
        self._started_once = False
        self._all_started = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    # --- workers ---------------------------------------------------------------------------------------

    async def _spawn(self, slot: Slot) -> asyncio.subprocess.Process:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(slot.admin_socket)
        fds = tuple(sock.fileno() for sock in self.sockets)
        spec = WorkerSpec(slot.index, worker_share(self.config, self.workers, slot.index), fds, slot.admin_socket,
                          os.getpid())
        proc = await asyncio.create_subprocess_exec(
            self.python, "-m", "proxy.workers", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            pass_fds=fds)
        assert proc.stdin is not None
        proc.stdin.write(pickle.dumps(spec))
        await proc.stdin.drain()
        proc.stdin.close()
        slot.proc, slot.spawned_at = proc, time.monotonic()
        log.info("worker started", extra={"worker": slot.index, "pid": proc.pid})
        return proc

    async def _keep(self, slot: Slot) -> None:
        """Run worker `slot` until the pod stops, restarting it when it dies."""
        backoff = BACKOFF_INITIAL
        while not self._stopping.is_set():
            try:
                proc = await self._spawn(slot)
            except OSError as exc:  # out of processes or memory: the pod cannot serve as configured
                log.error("cannot start a worker process", extra={"worker": slot.index, "error": str(exc)})
                self._failed = self._failed or 1
                self._stopping.set()
                return
            assert proc.stdout is not None
            try:
                line = await asyncio.wait_for(proc.stdout.readline(), START_SECONDS)
            except TimeoutError:
                line = b""
                log.error("worker did not start in time", extra={"worker": slot.index, "seconds": START_SECONDS})
                proc.kill()
            if line == STARTED:
                slot.up = True
                self.metrics.up.labels(str(slot.index)).set(1)
                self._check_started()
            code = await proc.wait()
            slot.up = False
            self.metrics.up.labels(str(slot.index)).set(0)
            self._retire(slot)
            if self._stopping.is_set():
                return
            exit_info: dict[str, object] = {"worker": slot.index, "pid": proc.pid}
            if code < 0:
                exit_info["signal"] = signal.Signals(-code).name
            else:
                exit_info["exit_code"] = code
            if not self._started_once:
                log.error("worker failed to start; stopping", extra=exit_info)
                self._failed = code if code > 0 else 1
                self._stopping.set()
                return
            if time.monotonic() - slot.spawned_at >= STABLE_SECONDS:
                backoff = BACKOFF_INITIAL
            slot.restarts += 1
            self.metrics.restarts.labels(str(slot.index)).inc()
            log.error("worker exited; restarting", extra={**exit_info, "restarts": slot.restarts,
                                                          "backoff_s": backoff})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    def _check_started(self) -> None:
        if not self._started_once and all(slot.up for slot in self.slots):
            self._started_once = True
            self._all_started.set()

    def _retire(self, slot: Slot) -> None:
        if slot.snapshot:
            self.merger.retire(slot.snapshot)
            slot.retired_requests += requests_of(slot.snapshot)
            slot.snapshot = []

    async def snapshot(self) -> None:
        """Read every live worker's metrics (kept per slot: the merge, and the counters of a worker that dies)."""

        async def one(slot: Slot) -> None:
            if not slot.up:
                return
            try:
                status, body = await ask(slot.admin_socket, "/metrics")
                if status == 200 and slot.up:
                    slot.snapshot = await asyncio.to_thread(parse, body.decode("utf-8", "replace"))
            except (OSError, TimeoutError, ValueError) as exc:
                log.warning("cannot read a worker's metrics", extra={"worker": slot.index, "error": repr(exc)})

        await asyncio.gather(*(one(slot) for slot in self.slots))

    async def workers_ready(self) -> int:
        async def one(slot: Slot) -> bool:
            if not slot.up:
                return False
            with contextlib.suppress(OSError, TimeoutError, ConnectionError):
                status, _ = await ask(slot.admin_socket, "/healthz", 1.0)
                return status == 200
            return False

        return sum(await asyncio.gather(*(one(slot) for slot in self.slots)))

    async def _snapshots(self) -> None:
        while not self._stopping.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), SNAPSHOT_SECONDS)
            if not self._stopping.is_set():
                await self.snapshot()

    def _signal_all(self, sig: int) -> None:
        for slot in self.slots:
            if slot.proc is not None and slot.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    slot.proc.send_signal(sig)

    def request_stop(self) -> None:
        self._stopping.set()

    def request_reload(self) -> None:
        log.info("reloading rules in every worker", extra={"workers": self.workers})
        self._signal_all(signal.SIGHUP)

    # --- the pod ---------------------------------------------------------------------------------------

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, self.request_reload)
        try:
            self.sockets = bind_listeners(self.config.listen)
        except OSError as exc:
            log.error(f"cannot listen on {self.config.listen}: {exc}")
            return 1
        self._tasks = [asyncio.create_task(self._keep(slot), name=f"warden-worker-{slot.index}")
                       for slot in self.slots]
        started = asyncio.create_task(self._all_started.wait())
        stopping = asyncio.create_task(self._stopping.wait())
        await asyncio.wait({started, stopping}, return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        stopping.cancel()
        if self._started_once and not self._stopping.is_set():
            try:
                await self.admin.start()
            except OSError as exc:
                log.error(f"cannot open the admin port {self.config.admin}: {exc}")
                self._failed = 1
                self._stopping.set()
        if not self._stopping.is_set():
            addrs = [f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in self.sockets]
            log.info("serving", extra={"listen": addrs, "admin": f"{self.config.admin.host}:{self.admin.port}",
                                       "upstream": self.config.upstream, "workers": self.workers})
            snapshots = asyncio.create_task(self._snapshots(), name="warden-metric-snapshots")
            await self._stopping.wait()
            snapshots.cancel()
        await self.drain()
        return self._failed or 0

    async def drain(self) -> None:
        self.pod_readiness.draining = True
        self.readiness.draining = True
        log.info("draining workers", extra={"workers": self.workers, "grace_s": self.config.drain_grace})
        self._signal_all(signal.SIGTERM)
        # No worker starts again: once every worker has closed its descriptors too, the port refuses new
        # connections (as one draining process does) instead of queueing them until the end of the drain.
        for sock in self.sockets:
            sock.close()
        done, pending = await asyncio.wait(self._tasks, timeout=self.config.drain_grace + STOP_MARGIN)
        if pending:
            log.error("workers did not stop in time; killing them", extra={"workers": len(pending)})
            self._signal_all(signal.SIGKILL)
            await asyncio.wait(pending, timeout=5.0)
        for task in done:
            if not task.cancelled() and task.exception() is not None:
                log.error("worker supervision failed", extra={"error": repr(task.exception())})
        await self.admin.close()
        shutil.rmtree(self._dir, ignore_errors=True)
        log.info("stopped")


async def supervise(config: WardenConfig, workers: int) -> int:
    """`warden serve` with `workers` > 1 processes; the exit code."""
    try:
        config = with_admin_token(config)  # read a token file once, refuse an open non-loopback /metrics
        prepare_keys(config)
    except (ConfigError, AuditError, OSError) as exc:
        log.error("cannot start: %s", exc)
        return EXIT_CONFIG
    return await Supervisor(config, workers).run()
