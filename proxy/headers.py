"""Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection and must not be forwarded.

mitmproxy forwards them as they are. Transfer-Encoding stays: mitmproxy frames bodies by it and rewrites it.
"""

from __future__ import annotations

from mitmproxy.http import Headers

HOP_BY_HOP = ("connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization",
              "te", "trailer", "upgrade")


def strip_hop_by_hop(headers: Headers) -> None:
    listed = [name.strip().lower() for value in headers.get_all("connection") for name in value.split(",")]
    for name in (*HOP_BY_HOP, *listed):
        if name and name != "transfer-encoding" and name in headers:
            del headers[name]
