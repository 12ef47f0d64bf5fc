"""`warden webhook`: the injection as a MutatingAdmissionWebhook (admission.k8s.io/v1) over TLS.

POST /mutate takes an AdmissionReview for a Pod and answers with the same `proxy.k8s.inject.inject_report` as a
base64 JSONPatch (RFC 6902). A pod that cannot be injected as annotated, or whose model server's port cannot
be moved with certainty (proxy/k8s/ports.py), is denied with the reason naming the container (fail closed, like
the webhook's `failurePolicy: Fail`); a pod that is not selected is allowed without a patch. Each decision is
logged. GET /healthz answers 200 for the Deployment's probes. Standard library only: http.server in threads behind ssl.
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import json
import logging
import signal
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from proxy.config import ConfigError, parse_hostport
from proxy.k8s.inject import InjectOptions, default_image, inject_report

log = logging.getLogger("warden.webhook")

EXIT_CONFIG = 78
EXIT_USAGE = 64
MAX_REVIEW_BYTES = 4 * 1024 * 1024  # the API server caps requests at 3 MiB; a pod never comes near
REQUEST_TIMEOUT_SECONDS = 10  # the API server's own webhook timeout is 10 s by default


def _pointer(path: list[str]) -> str:
    """RFC 6901: `~` -> `~0`, `/` -> `~1` (annotation keys such as warden.io/status contain slashes)."""
    return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def json_patch(before: Any, after: Any, path: list[str] | None = None) -> list[dict[str, Any]]:
    """An RFC 6902 patch turning `before` into `after`: objects are diffed key by key, a changed list or
    scalar is replaced whole (simple and always correct; pods are small)."""
    path = path or []
    if isinstance(before, dict) and isinstance(after, dict):
        ops: list[dict[str, Any]] = []
        for key in before:
            if key not in after:
                ops.append({"op": "remove", "path": _pointer([*path, key])})
        for key, value in after.items():
            if key not in before:
                ops.append({"op": "add", "path": _pointer([*path, key]), "value": value})
            elif before[key] != value:
                ops += json_patch(before[key], value, [*path, key])
        return ops
    if before == after:
        return []
    return [{"op": "replace", "path": _pointer(path), "value": after}]


def review_response(review: dict[str, Any], options: InjectOptions) -> dict[str, Any]:
    """The AdmissionReview answer to `review` (apiVersion admission.k8s.io/v1)."""
    request = review.get("request") or {}
    response: dict[str, Any] = {"uid": request.get("uid", ""), "allowed": True}
    pod = request.get("object")
    if isinstance(pod, dict) and pod.get("kind", "Pod") == "Pod":
        pod = {"apiVersion": "v1", "kind": "Pod", **pod}
        meta = pod.setdefault("metadata", {})
        # on CREATE the pod has no namespace yet in its metadata; the request carries it (for error messages)
        if request.get("namespace") and not meta.get("namespace"):
            pod = {**pod, "metadata": {**meta, "namespace": request["namespace"]}}
        injected, decisions = inject_report(pod, options)
        for decision in decisions:
            log.info("%s", decision, extra={"uid": response["uid"], "outcome": decision.outcome})
        refused = [d.reason for d in decisions if d.outcome == "refused"]
        if refused:
            response.update(allowed=False, status={"code": 400, "message": f"warden injection: {'; '.join(refused)}"})
        else:
            patch = json_patch(pod, injected)
            if patch:
                response["patchType"] = "JSONPatch"
                response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


class _Handler(BaseHTTPRequestHandler):
    server_version = "warden-webhook"
    options: InjectOptions  # set on the subclass made by `make_server`
    timeout = REQUEST_TIMEOUT_SECONDS  # on the socket: a peer that stalls (handshake, headers, body) is dropped

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/healthz":
            self._send(200, {"status": "ok"})
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/mutate":
            self._send(404, {"error": "not found"})
            return
        declared = self.headers.get("Content-Length") or "0"
        length = int(declared) if declared.isdigit() else 0
        if not 0 < length <= MAX_REVIEW_BYTES:
            self._send(413 if length else 400, {"error": "bad Content-Length"})
            return
        try:
            review = json.loads(self.rfile.read(length))
            if not isinstance(review, dict) or not isinstance(review.get("request"), dict):
                raise ValueError("not an AdmissionReview")
        except (ValueError, RecursionError) as exc:
            self._send(400, {"error": f"invalid AdmissionReview: {str(exc)[:200]}"})
            return
        self._send(200, review_response(review, self.options))

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)


class _TlsServer(ThreadingHTTPServer):
    """TLS per accepted connection, its handshake in the request's own thread (under the handler's socket
    timeout): a listening socket wrapped whole shakes hands inside the accept loop, where one peer that
    connects and sends nothing stops every later call, and pod creation waits on those calls."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 context: ssl.SSLContext) -> None:
        super().__init__(address, handler)
        self.context = context

    def get_request(self) -> tuple[Any, Any]:
        sock, address = super().get_request()
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exception(), OSError):  # a failed handshake, a peer gone: theirs, not a bug of ours
            log.debug("webhook connection failed", extra={"error": str(sys.exception())})
            return
        super().handle_error(request, client_address)


def make_server(host: str, port: int, cert: str, key: str, options: InjectOptions) -> ThreadingHTTPServer:
    """A bound, TLS-serving server (port 0 picks a free one); call `serve_forever()` and `shutdown()`."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    handler = type("Handler", (_Handler,), {"options": options})
    return _TlsServer((host, port), handler, context)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warden webhook", description="Serve the Warden sidecar injection as a "
                                "Kubernetes MutatingAdmissionWebhook (POST /mutate, GET /healthz) over TLS.")
    p.add_argument("--tls-cert", required=True, help="serving certificate (PEM)")
    p.add_argument("--tls-key", required=True, help="its private key (PEM)")
    p.add_argument("--listen", default="0.0.0.0:8443", help="HOST:PORT (default 0.0.0.0:8443)")
    p.add_argument("--image", default=None, help=f"sidecar image (default {default_image()})")
    p.add_argument("--native-sidecar", action=argparse.BooleanOptionalAction, default=True,
                   help="an init container with restartPolicy: Always (Kubernetes >= 1.29; default on)")
    p.add_argument("--cluster", help="cluster name for audit origins (WARDEN_CLUSTER in the sidecar)")
    return p


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else EXIT_USAGE
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    options = InjectOptions(native_sidecar=args.native_sidecar, cluster=args.cluster)
    if args.image:
        options = dataclasses.replace(options, image=args.image)
    try:
        listen = parse_hostport(args.listen)
        server = make_server(listen.host, listen.port, args.tls_cert, args.tls_key, options)
    except (ConfigError, OSError, ssl.SSLError) as exc:
        print(f"warden webhook: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    # As a container's PID 1 the kernel drops signals that keep their default action: without a handler the
    # kubelet's SIGTERM is ignored and the pod is killed only after its grace period. shutdown() waits for
    # serve_forever, so it runs on another thread; the requests in flight finish first. Installed before the
    # "serving on" line: a SIGTERM sent as soon as that line shows (the test does) was dropped on a loaded host, and
    # the webhook ran on. One that arrives before serve_forever starts stops it as it starts.
    signal.signal(signal.SIGTERM, lambda _sig, _frame: threading.Thread(target=server.shutdown, daemon=True).start())
    log.info("serving on %s (image %s)", listen, options.image)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
