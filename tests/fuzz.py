"""The budget of the fuzz tests (`tests/**/test_*_fuzz.py`): small enough for every CI run, larger on demand.

`WARDEN_FUZZ_EXAMPLES=5000 pytest tests/proxy/test_sse_fuzz.py` runs each fuzz test with that many examples
instead of its CI default. Deadlines are off: a slow example on a loaded 2-core runner is not a fault, and
hypothesis would report it as one.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_OVERRIDE = os.environ.get("WARDEN_FUZZ_EXAMPLES", "").strip()


def fuzz(default: int) -> settings:
    """Settings for one fuzz test: `default` examples in CI, or the number in WARDEN_FUZZ_EXAMPLES."""
    return settings(
        max_examples=int(_OVERRIDE) if _OVERRIDE else default,
        deadline=None,
        # Generated documents and byte strings are large on purpose; module fixtures are shared read-only.
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                               HealthCheck.function_scoped_fixture],
    )
