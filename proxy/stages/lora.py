"""LoRA provenance and the model server's adapter admin routes (request, response).

For inference routes: the request's `model` is looked up in the LoRA registry (proxy/lora.py) and the
adapter, its base model and its weight checksum go into the flow state for spans and the audit record.
For the admin routes (`/v1/load_lora_adapter`, `/v1/unload_lora_adapter`, Triton's `/v2/repository/*`):
changing what the model server runs is denied with an OpenAI-shaped 403 unless `allow_model_admin` is set;
either way the call is logged, counted and (as every exchange) audited with the adapter name and path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable

from mitmproxy import http

from proxy.errors import ApiError
from proxy.lora import CHECKSUM_WAIT_SECONDS, ModelInfo
from proxy.services import Services
from proxy.stages.base import fail_closed, request_json
from proxy.state import FlowState, Outcome, Route, get_state, record_name

log = logging.getLogger("warden.lora")

MODEL_ADMIN_DENIED = ApiError(
    403, "permission_error", "model_admin_denied",
    "Warden does not forward model administration calls (loading or unloading adapters and models); "
    "the operator can allow them with allow_model_admin.",
)
_ADMIN_ACTIONS = {"/v1/load_lora_adapter": "load_lora_adapter", "/v1/unload_lora_adapter": "unload_lora_adapter"}
_REPOSITORY_VERBS = frozenset({"load", "unload", "index"})


def admin_action(path: str) -> str:
    """A bounded name for an admin call: `load_lora_adapter`, `repository_load`, ... or `model_admin`."""
    path = path.split("?", 1)[0].rstrip("/")
    action = _ADMIN_ACTIONS.get(path)
    if action is not None:
        return action
    verb = path.rsplit("/", 1)[-1]
    return f"repository_{verb}" if path.startswith("/v2/repository/") and verb in _REPOSITORY_VERBS else "model_admin"


def _bounded(value: object) -> str | None:
    """An adapter name or path from an admin body, as records carry names (bounded, UTF-8 encodable: the audit
    log refuses a lone surrogate); None when absent or empty."""
    return record_name(value) or None


class Lora:
    def __init__(self, services: Services) -> None:
        self.registry = services.lora
        self.allow_admin = services.config.allow_model_admin
        self.metrics = services.metrics
        self.limit = services.config.max_body_bytes

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        if state is None or flow.response is not None:
            return None
        if state.route is Route.MODEL_ADMIN:
            self._admin(flow, state)
            return None
        if self.registry is None or not state.requested_model:
            return None
        info = self.registry.lookup(state.requested_model)
        if info is None:
            warming = self.registry.warming()
            return None if warming is None else self._after_warm_up(warming, state)
        self._apply(state, info)
        if info.adapter and info.weights_sha256 is None:
            pending = self.registry.pending_checksum(info.name)
            if pending is not None:
                return self._await_checksum(pending, state)
        return None

    def _apply(self, state: FlowState, info: ModelInfo) -> None:
        state.provenance.base_model = info.base_model
        if info.adapter:
            state.provenance.lora_adapter = info.name
            state.provenance.lora_weights_sha256 = info.weights_sha256

    async def _after_warm_up(self, warming: Awaitable[None], state: FlowState) -> None:
        """The first requests after start-up wait (bounded) for the first read of the upstream's models."""
        assert self.registry is not None
        with contextlib.suppress(TimeoutError, Exception):
            await asyncio.wait_for(asyncio.shield(warming), CHECKSUM_WAIT_SECONDS)
        info = self.registry.lookup(state.requested_model or "")
        if info is not None:
            self._apply(state, info)

    @staticmethod
    async def _await_checksum(pending: asyncio.Future[str | None], state: FlowState) -> None:
        with contextlib.suppress(TimeoutError):
            state.provenance.lora_weights_sha256 = await asyncio.wait_for(asyncio.shield(pending),
                                                                          CHECKSUM_WAIT_SECONDS)

    def _admin(self, flow: http.HTTPFlow, state: FlowState) -> None:
        action = admin_action(flow.request.path)
        body = request_json(flow, state, self.limit) or {}
        state.provenance.model_admin_action = action
        state.provenance.model_admin_allowed = self.allow_admin
        state.provenance.lora_adapter = _bounded(body.get("lora_name"))
        facts = {"request_id": state.request_id, "action": action, "adapter": state.provenance.lora_adapter,
                 "adapter_path": _bounded(body.get("lora_path"))}
        self.metrics.model_admin_child(action, "allowed" if self.allow_admin else "denied").inc()
        if not self.allow_admin:
            state.outcome = Outcome.BLOCKED
            flow.response = MODEL_ADMIN_DENIED.response(state.request_id)
            log.warning("model admin call denied", extra=facts)
            return
        log.warning("model admin call forwarded", extra=facts)

    @fail_closed
    def response(self, flow: http.HTTPFlow) -> Awaitable[None] | None:
        state = get_state(flow)
        if (state is None or not state.provenance.model_admin_allowed or self.registry is None or flow.response is None
                or flow.response.status_code != 200 or not state.provenance.lora_adapter):
            return None
        if state.provenance.model_admin_action == "unload_lora_adapter":
            self.registry.remove_adapter(state.provenance.lora_adapter)
            return None
        if state.provenance.model_admin_action != "load_lora_adapter":
            return None
        body = state.request_json or {}
        task = self.registry.add_adapter(state.provenance.lora_adapter, _bounded(body.get("lora_path")))
        return None if task is None else self._await_checksum(task, state)  # audit: which weights were loaded
