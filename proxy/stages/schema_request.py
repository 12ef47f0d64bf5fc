"""Stage 2b (request): which schemas the answer must fit (proxy/schemas/sources.py), decided before anything
goes upstream. A schema in the request that Warden cannot use is refused with 400 `invalid_schema`; a route
schema is added to the upstream request as `response_format` (`schema_inject: auto`), so a model server that
decodes under a grammar is constrained at the source. Request-supplied schemas pass on as they came.

It runs after the request's inspection: a prompt that is blocked is recorded as blocked, and the body it
extends is the one the inspection rewrote.
"""

from __future__ import annotations

import dataclasses

from mitmproxy import http

from proxy.bodies import json_bytes
from proxy.errors import invalid_schema
from proxy.schemas.plan import SchemaFacts
from proxy.schemas.sources import RequestSchemaError, injected_format, plan_for
from proxy.services import Services
from proxy.stages.base import fail_closed, request_json
from proxy.state import Outcome, Route, get_state

SCHEMA_ROUTES = frozenset({Route.CHAT, Route.RESPONSES})


class SchemaRequest:
    def __init__(self, services: Services) -> None:
        self.services = services
        self.config = services.config
        self.cache = services.schema_cache
        self.route_schemas = services.route_schemas
        self.inject = self.config.schema_inject == "auto"

    @fail_closed
    def request(self, flow: http.HTTPFlow) -> None:
        state = get_state(flow)
        if state is None or flow.response is not None or state.route not in SCHEMA_ROUTES:
            return
        body = request_json(flow, state, self.config.max_body_bytes)
        if body is None:
            return  # nothing to plan for (refused already when guarded; forwarded as it came when not)
        try:
            plan, route_schema = plan_for(state.route, body, self.route_schemas, self.cache)
        except RequestSchemaError as exc:
            state.outcome = Outcome.BAD_REQUEST
            state.error_detail = "invalid_schema"
            flow.response = invalid_schema(exc.param, exc.reason).response(state.request_id)
            return
        if plan is None:
            return
        if route_schema is not None and self.inject:
            body["response_format"] = injected_format(route_schema, self.config.backend)
            flow.request.content = json_bytes(body)
            plan = dataclasses.replace(plan, injected=True)
        # The answer is read event by event (or whole) to be checked: asked for uncompressed, as the guard asks.
        flow.request.headers["accept-encoding"] = "identity"
        state.schema = SchemaFacts(plan)
