"""proxy/exceptions.py: `ProxyError` is the root of every exception the proxy defines (DESIGN section 10.5)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import proxy
from proxy.config import ConfigError
from proxy.exceptions import ProxyError
from proxy.k8s.inject import InjectError
from proxy.lora import LoraError
from proxy.server import StartupError
from proxy.telemetry.tracing import TracingConfigError


def defined_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined at the top of a module under proxy/ (imports of others' excluded)."""
    found: dict[str, type[BaseException]] = {}
    for module_info in pkgutil.walk_packages(proxy.__path__, "proxy."):
        module = importlib.import_module(module_info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def test_every_exception_under_proxy_derives_from_proxy_error() -> None:
    found = defined_exceptions()
    assert len(found) >= 10  # the walk reached the rooms (k8s, telemetry, guard), not just the top
    assert {name for name, cls in found.items() if not issubclass(cls, ProxyError)} == set()


def test_errors_callers_catch_by_builtin_type_keep_that_type() -> None:
    for cls in (ConfigError, InjectError, LoraError, TracingConfigError):
        assert issubclass(cls, ValueError)
    assert issubclass(StartupError, RuntimeError)
