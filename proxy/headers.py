"""Hop-by-hop headers (RFC 9110 section 7.6.1) belong to one connection and must not be forwarded.

mitmproxy forwards them as they are. Runs on every request and response, so it looks at the raw header fields
once and rebuilds them only when there is something to drop.

A header that frames the message is never dropped, whatever `Connection` names: mitmproxy framed the body by
`Content-Length` or `Transfer-Encoding` (and rewrites the latter) before our hooks run, and `Host` says where it
goes. Dropping `Content-Length` because a client wrote `Connection: keep-alive, Content-Length` forwarded the
body unframed, so the upstream read it as a second request nobody inspected (request smuggling).
"""

from __future__ import annotations

from mitmproxy.http import Headers
from mitmproxy.net.http import http1

HOP_BY_HOP = frozenset(
    {b"connection", b"keep-alive", b"proxy-connection", b"proxy-authenticate", b"proxy-authorization", b"te",
     b"trailer", b"upgrade"}
)
NEVER_DROPPED = frozenset({b"content-length", b"transfer-encoding", b"host"})


def strip_hop_by_hop(headers: Headers) -> None:
    fields = headers.fields
    if not any(name.lower() in HOP_BY_HOP for name, _ in fields):
        return
    drop = set(HOP_BY_HOP)
    for name, value in fields:
        if name.lower() == b"connection":
            drop.update(token.strip().lower() for token in value.split(b","))
    drop -= NEVER_DROPPED
    headers.fields = tuple((name, value) for name, value in fields if name.lower() not in drop)


def wants_close(http_version: str, headers: Headers) -> bool:
    """The client asked for its connection to close after this exchange (RFC 9112 section 9.6): `Connection:
    close`, or HTTP/1.0 without `keep-alive`. Read before `strip_hop_by_hop` removes the header: mitmproxy
    decides whether to close from the same header object once the exchange is done, and would keep the
    connection open."""
    return http_version.startswith("HTTP/1") and http1.connection_close(http_version, headers)
