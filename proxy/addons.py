"""The pipeline: the order of the stages is this one list (DESIGN section 2)."""

from __future__ import annotations

from proxy.services import Services
from proxy.stages.correlate import Correlate
from proxy.stages.deadline import Deadline
from proxy.stages.stream import Stream
from proxy.stages.telemetry import Telemetry


def default_addons(services: Services) -> list[object]:
    """Our stages in hook order. mitmproxy calls each hook on every addon in list order."""
    return [
        Correlate(services),  # requestheaders/request: id, route, limits, model
        Deadline(services),  # request: arm the upstream timeout; responseheaders: disarm
        Stream(services.clock),  # responseheaders: SSE relay
        Telemetry(services),  # response/error: outcome and metrics
    ]
