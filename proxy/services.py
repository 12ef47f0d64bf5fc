"""The things stages share, built once at start-up and injected (DESIGN section 10.7)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from proxy.config import WardenConfig
from proxy.digest import Digester
from proxy.metrics import Metrics


@dataclass(frozen=True, slots=True)
class Services:
    config: WardenConfig
    metrics: Metrics
    clock: Callable[[], float] = field(default=time.perf_counter)
    digester: Digester = field(default_factory=Digester)
