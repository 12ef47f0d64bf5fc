"""`ProxyError`, the root of the proxy's own exceptions (DESIGN section 10.5).

A module of its own, importing nothing, so that every room can derive from it, `proxy.k8s` included
(which must load no mitmproxy, and proxy/errors.py builds mitmproxy responses). An error a caller already
catches as `ValueError` or `RuntimeError` keeps that base too.
"""

from __future__ import annotations


class ProxyError(Exception):
    """Something the proxy refuses or cannot do; the subclass and its message say what and why."""
