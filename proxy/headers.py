"""Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection and must not be forwarded.

mitmproxy forwards them as they are. Transfer-Encoding stays: mitmproxy frames bodies by it and rewrites it.
Runs on every request and response, so it looks at the raw header fields once and rebuilds them only when
there is something to drop.
"""

from __future__ import annotations

from mitmproxy.http import Headers

HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authenticate", b"proxy-authorization", b"te",
     b"trailer", b"upgrade"}
)


def strip_hop_by_hop(headers: Headers) -> None:
    fields = headers.fields
    if not any(name.lower() in HOP_BY_HOP for name, _ in fields):
        return
    drop = set(HOP_BY_HOP)
    for name, value in fields:
        if name.lower() == b"connection":
            drop.update(token.strip().lower() for token in value.split(b","))
    drop.discard(b"transfer-encoding")
    headers.fields = tuple((name, value) for name, value in fields if name.lower() not in drop)
