"""What every stage shares: fail-closed hook wrapping and body parsing done once per flow."""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mitmproxy import http

from proxy.bodies import BodyError, decode, parse_json
from proxy.errors import internal_error, invalid_json
from proxy.headers import header
from proxy.state import FlowState, Outcome, get_state

log = logging.getLogger("warden.stage")

def fail_closed[Hook: Callable[..., Any]](hook: Hook) -> Hook:
    """An exception in our own code must not let the exchange through unguarded (DESIGN section 10.6).

    mitmproxy logs addon exceptions and carries on, which would be failing open; instead the flow gets a
    500 when no answer has been sent yet, or is killed when a response is already on its way.
    """

    def fail(self: object, flow: http.HTTPFlow) -> None:
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

    async def guarded(self: object, flow: http.HTTPFlow, pending: Awaitable[Any]) -> None:
        try:
            await pending
        except Exception:
            fail(self, flow)

    @functools.wraps(hook)
    def wrapper(self: object, flow: http.HTTPFlow, *args: Any) -> Any:
        try:
            result = hook(self, flow, *args)
        except Exception:
            fail(self, flow)
            return None
        if result is not None and inspect.isawaitable(result):  # work handed to a thread: guard it too
            return guarded(self, flow, result)
        return result

    return wrapper  # type: ignore[return-value]


def request_json(flow: http.HTTPFlow, state: FlowState, limit: int) -> dict[str, object] | None:
    """The request body as a JSON object, decoded (bounded) and parsed at most once per flow.

    None when there is no body or it is not a JSON object; why is kept in `state.request_body_error`.
    """
    if state.request_json_parsed:
        return state.request_json
    state.request_json_parsed = True
    raw = flow.request.raw_content
    if not raw:
        return None
    try:
        content = decode(raw, header(flow.request.headers, b"content-encoding"), limit)
        parsed = parse_json(content)
    except BodyError as exc:
        state.request_body_error = exc.error
        return None
    except (ValueError, UnicodeDecodeError) as exc:  # json.JSONDecodeError is a ValueError
        state.request_body_error = invalid_json(type(exc).__name__ + " at " + str(getattr(exc, "pos", "?")))
        return None
    except RecursionError:  # nesting deeper than the parser's stack: no API body is like that
        state.request_body_error = invalid_json("nested too deeply")
        return None
    state.request_body = content
    if isinstance(parsed, dict):
        state.request_json = parsed
    else:
        state.request_body_error = invalid_json("the body must be a JSON object")
    return state.request_json
