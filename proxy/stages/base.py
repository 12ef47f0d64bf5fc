"""What every stage shares: fail-closed hook wrapping and body parsing done once per flow."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from typing import Any

from mitmproxy import http

from proxy.errors import internal_error
from proxy.state import FlowState, Outcome, get_state

log = logging.getLogger("warden.stage")

def fail_closed[Hook: Callable[..., Any]](hook: Hook) -> Hook:
    """An exception in our own code must not let the exchange through unguarded (DESIGN section 10.6).

    mitmproxy logs addon exceptions and carries on, which would be failing open; instead the flow gets a
    500 when no answer has been sent yet, or is killed when a response is already on its way.
    """

    @functools.wraps(hook)
    def wrapper(self: object, flow: http.HTTPFlow, *args: Any) -> Any:
        try:
            return hook(self, flow, *args)
        except Exception:
            state = get_state(flow)
            request_id = state.request_id if state else "-"
            log.exception(
                "stage failed; failing the exchange closed",
                extra={"stage": type(self).__name__, "hook": hook.__name__, "request_id": request_id},
            )
            if state is not None:
                state.outcome = Outcome.INTERNAL_ERROR
                state.error_detail = f"{type(self).__name__}.{hook.__name__}"
            if flow.response is None or not flow.response.stream:
                flow.response = internal_error(request_id).response(request_id)
            elif flow.killable:
                flow.kill()
            return None

    return wrapper  # type: ignore[return-value]


def request_json(flow: http.HTTPFlow, state: FlowState) -> dict[str, Any] | None:
    """The request body as a JSON object, parsed at most once per flow; None when it is not one."""
    if state.request_json_parsed:
        return state.request_json
    state.request_json_parsed = True
    content = flow.request.raw_content
    if content and "json" in flow.request.headers.get("content-type", "json"):
        try:
            parsed = json.loads(flow.request.get_content(strict=False) or b"")
        except (ValueError, UnicodeDecodeError):
            parsed = None
        state.request_json = parsed if isinstance(parsed, dict) else None
    return state.request_json
