"""The pipeline: the order of the stages is this one list (DESIGN section 2).

mitmproxy walks every addon for every event (and again for an `update` event after each flow hook), so
each addon costs on every request whether it has the hook or not. The stages are therefore registered with
mitmproxy as one `Pipeline` addon that calls, per hook, only the stages that implement it, in list order.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mitmproxy import addonmanager, http
from mitmproxy.proxy import server_hooks

from proxy.mitm import dispatch
from proxy.services import Services
from proxy.stages.admission import Admission
from proxy.stages.audit_emit import AuditEmit
from proxy.stages.correlate import Correlate
from proxy.stages.deadline import Deadline
from proxy.stages.inspect_request import InspectRequest
from proxy.stages.inspect_response import InspectResponse
from proxy.stages.lora import Lora
from proxy.stages.schema import SchemaCheck
from proxy.stages.schema_request import SchemaRequest
from proxy.stages.settle import Settle
from proxy.stages.stream import Stream
from proxy.stages.telemetry import Telemetry
from proxy.stages.trace import Trace

FLOW_HOOKS = ("requestheaders", "request", "responseheaders", "response", "error")
SERVER_HOOKS = ("server_connect", "server_connected", "server_connect_error")  # once per upstream connection

StageHook = Callable[[http.HTTPFlow], Awaitable[None] | None]


def default_stages(services: Services) -> list[object]:
    """Our stages in hook order."""
    return [
        Correlate(services),  # requestheaders/request: id, route, limits, model
        Admission(services),  # requestheaders: a slot of max_inflight, a short queue, or 429; released at the end
        Lora(services),  # request: LoRA provenance; model admin routes denied unless allowed
        InspectRequest(services),  # request: detect, decide, block or rewrite the prompt
        SchemaRequest(services),  # request: the answer's schemas; 400 invalid_schema; route schema injected
        Trace(services),  # requestheaders: SERVER span; request: CLIENT span, traceparent to the upstream
        Deadline(services),  # server_connect: connect deadline; request: arm the upstream timeout
        Stream(services),  # responseheaders: SSE relay with the stream guard
        SchemaCheck(services),  # response: a whole answer against its schemas; flag, reject or re-ask
        InspectResponse(services),  # response: whole answers masked, pseudonyms restored, or blocked
        Settle(services),  # response/error: status, outcome, end time, decided once
        *([AuditEmit(services, services.audit)] if services.audit is not None else []),  # one record each
        Telemetry(services),  # response/error: metrics, spans (with the audit seq), the exchange log line
    ]


class Pipeline:
    """One mitmproxy addon that runs the stages' hooks in order; a stage may return an awaitable."""

    def __init__(self, stages: Sequence[object]) -> None:
        self.stages = list(stages)
        self._hooks: dict[str, list[StageHook]] = {
            name: [getattr(s, name) for s in self.stages if callable(getattr(s, name, None))] for name in FLOW_HOOKS
        }
        self._server_hooks: dict[str, list[Callable[[server_hooks.ServerConnectionHookData], None]]] = {
            name: [getattr(s, name) for s in self.stages if callable(getattr(s, name, None))]
            for name in SERVER_HOOKS
        }

    def load(self, loader: addonmanager.Loader) -> None:
        """mitmproxy's hook walk, done once per hook instead of once per event (proxy/mitm/dispatch.py): the
        master that loads the pipeline is Warden's own."""
        dispatch.install(loader.master.addons)

    def _run(self, name: str, flow: http.HTTPFlow) -> Awaitable[None] | None:
        hooks = self._hooks[name]
        for i, hook in enumerate(hooks):
            result = hook(flow)
            if result is not None and inspect.isawaitable(result):  # `is not None` first: the hot path
                return self._finish_async(result, hooks[i + 1 :], flow)
        return None

    @staticmethod
    async def _finish_async(pending: Awaitable[Any], rest: list[StageHook], flow: http.HTTPFlow) -> None:
        await pending
        for hook in rest:
            result = hook(flow)
            if inspect.isawaitable(result):
                await result

    def requestheaders(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._run("requestheaders", flow)

    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._run("request", flow)

    def responseheaders(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._run("responseheaders", flow)

    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._run("response", flow)

    def error(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        return self._run("error", flow)

    # Connection hooks are synchronous: they run inside the task that opens the upstream connection.
    def server_connect(self, data: server_hooks.ServerConnectionHookData) -> None:
        for hook in self._server_hooks["server_connect"]:
            hook(data)

    def server_connected(self, data: server_hooks.ServerConnectionHookData) -> None:
        for hook in self._server_hooks["server_connected"]:
            hook(data)

    def server_connect_error(self, data: server_hooks.ServerConnectionHookData) -> None:
        for hook in self._server_hooks["server_connect_error"]:
            hook(data)


def default_addons(services: Services) -> list[object]:
    return [Pipeline(default_stages(services))]
