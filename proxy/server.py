"""mitmproxy embedded in our own asyncio program: the smallest addon set that works, plus our pipeline.

Measured (FACTS, bench/overhead.py): hook dispatch is a fifth of per-request CPU, so we load only what reverse
mode needs: Core (options plumbing), DisableH2C, Proxyserver, NextLayer and, only when the listener has a
certificate or the upstream is https, TlsConfig. DumpMaster's ~35 addons roughly double the per-request cost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import tempfile
from pathlib import Path
from typing import Any

from mitmproxy import options
from mitmproxy.addons import core, disable_h2c, next_layer, proxyserver, tlsconfig
from mitmproxy.master import Master

from proxy.addons import default_addons
from proxy.admin import AdminServer
from proxy.config import WardenConfig
from proxy.exceptions import ProxyError
from proxy.mitm.error_pages import install_mitmproxy_error_pages
from proxy.mitm.listener import serve_on
from proxy.mitm.wire_bounds import ConnectionSweeper, Wire, WireLimits, install
from proxy.services import Services

log = logging.getLogger("warden.server")


class StartupError(ProxyError, RuntimeError):
    """The proxy could not start (port in use, bad certificate); the message says which and why."""


def mitm_options(config: WardenConfig, confdir: Path) -> dict[str, Any]:
    listen = config.listen
    values: dict[str, Any] = {
        "mode": [f"reverse:{config.upstream}@{listen.host}:{listen.port}"],
        # Body limits per direction are enforced by proxy/mitm/wire_bounds.py (mitmproxy's body_size_limit is one
        # limit for both directions and stays unset).
        "connection_strategy": "lazy",
        "ssl_insecure": not config.upstream_tls_verify,
        "confdir": str(confdir),
    }
    if config.upstream_ca:
        values["ssl_verify_upstream_trusted_ca"] = config.upstream_ca
    if config.tls_cert and config.tls_key:
        # mitmproxy wants certificate and key in one PEM file; it lives in our private confdir.
        bundle = confdir / "listener.pem"
        bundle.write_bytes(Path(config.tls_cert).read_bytes() + b"\n" + Path(config.tls_key).read_bytes())
        bundle.chmod(0o600)
        values["certs"] = [f"*={bundle}"]
    return values


def wire_limits(config: WardenConfig) -> WireLimits:
    return WireLimits(
        max_header_bytes=config.max_header_bytes, header_timeout=config.header_timeout,
        idle_timeout=config.idle_timeout, request_body_bytes=config.max_body_bytes,
        response_body_bytes=config.max_response_bytes,
    )


def mitm_addons(config: WardenConfig) -> list[object]:
    addons: list[object] = [core.Core(), disable_h2c.DisableH2C(), proxyserver.Proxyserver(), next_layer.NextLayer()]
    if config.tls_cert or config.upstream.startswith("https://"):
        # TLS on either side: the listener's certificate, or the context an https upstream is reached with
        # (without it mitmproxy fails every upstream handshake: "No TLS context was provided").
        addons.append(tlsconfig.TlsConfig())
    return addons


class WardenProxy:
    """One running proxy: mitmproxy master, admin server, signal handling and draining."""

    def __init__(self, services: Services, *, listen_sockets: list[socket.socket] | None = None,
                 admin_unix: str | None = None) -> None:
        """One process serving `config.listen` and `config.admin`; or, as a worker of `--workers N`
        (proxy/workers.py), accepting on the supervisor's `listen_sockets` with its admin endpoint on the private
        Unix socket `admin_unix`."""
        self.services = services
        self.config = services.config
        if services.readiness is None:  # a programming error: only build_services makes a runnable set
            raise TypeError("WardenProxy needs the services of proxy/serve.py build_services (no readiness probe)")
        self.readiness = services.readiness
        self.listen_sockets = listen_sockets
        self.admin = AdminServer(self.config, services.metrics, self.readiness, unix_path=admin_unix)
        self.master: Master | None = None
        self._confdir = tempfile.TemporaryDirectory(prefix="warden-mitm-")
        self._stopping = asyncio.Event()
        self._background: set[asyncio.Task[object]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    @property
    def inflight(self) -> int:
        value = self.services.metrics.registry.get_sample_value("warden_inflight_requests")
        return int(value or 0)

    def listen_addrs(self) -> list[tuple[str, int]]:
        assert self.master is not None
        ps: Any = self.master.addons.get("proxyserver")
        return [(a[0], a[1]) for a in ps.listen_addrs()]

    async def start(self) -> None:
        # Signals first: a SIGTERM between the port opening and the handlers would kill the process with the
        # default action instead of draining (Kubernetes may stop a pod at any moment; seen in the tests).
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.request_stop)
        loop.add_signal_handler(signal.SIGHUP, self.request_reload)
        install_mitmproxy_error_pages()
        closed = self.services.metrics.connections_closed
        self.wire = Wire(wire_limits(self.config), count=lambda reason: closed.labels(reason).inc())
        install(self.wire)
        if self.listen_sockets:
            serve_on(self.listen_sockets)
        opts = options.Options()
        self.master = Master(opts)
        self.master.addons.add(*mitm_addons(self.config), *default_addons(self.services))
        opts.update(**mitm_options(self.config, Path(self._confdir.name)))
        await self.admin.start()
        self._run_task = asyncio.create_task(self.master.run(), name="mitmproxy")
        ps: Any = self.master.addons.get("proxyserver")
        for _ in range(500):
            await asyncio.sleep(0.01)
            if self._run_task.done():
                break
            if ps.listen_addrs():
                sweeper = ConnectionSweeper(self.wire, ps)
                self._sweeper = asyncio.create_task(sweeper.run(), name="warden-connection-sweeper")
                return
            errors = [str(s.last_exception) for s in ps.servers if s.last_exception]
            if errors:
                break
        errors = [str(s.last_exception) for s in ps.servers if s.last_exception]
        await self._stop_master()
        await self.admin.close()
        raise StartupError(f"cannot listen on {self.config.listen}: {'; '.join(errors) or 'did not come up'}")

    def request_stop(self) -> None:
        self._stopping.set()

    def request_reload(self) -> None:
        """SIGHUP: recompile the rules in a worker thread; the old ones stay live if the new ones are bad."""
        task = asyncio.get_running_loop().create_task(asyncio.to_thread(self.services.guard.reload))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def serve_until_stopped(self) -> None:
        await self._stopping.wait()  # set by SIGTERM/SIGINT (handlers installed by `start`)
        await self.drain()

    async def drain(self) -> None:
        """Stop accepting, let in-flight exchanges and streams finish within the grace period, then stop."""
        assert self.master is not None
        self.readiness.draining = True
        log.info("draining", extra={"inflight": self.inflight, "grace_s": self.config.drain_grace})
        self.master.options.update(server=False)  # closes the listeners, keeps open connections
        deadline = asyncio.get_running_loop().time() + self.config.drain_grace
        while self.inflight > 0 and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.05)
        if self.inflight > 0:
            log.warning("grace period over; cutting remaining exchanges", extra={"inflight": self.inflight})
        await self._stop_master()
        await self.admin.close()
        if self.services.audit is not None:
            # The shutdown record and a final signed checkpoint: the verifier then sees a clean end.
            closed = await asyncio.to_thread(self.services.audit.close, 10.0)
            if not closed:
                log.error("audit log did not close cleanly; the next boot will anchor its tail")
        self._confdir.cleanup()
        log.info("stopped")

    async def _stop_master(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
        if self.master is not None:
            self.master.shutdown()
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._run_task, 10)
