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


def header(headers: Headers, name: bytes, default: str = "") -> str:
    """`headers.get(name, default)`: every value of the field folded with ", ", decoded as mitmproxy decodes
    (UTF-8, surrogateescape). `name` is lower-case bytes. mitmproxy's own lookup converts the name and each
    field's name per call and finds a missing field by its KeyError: our stages look up a few fields on
    every exchange."""
    values = [value for key, value in headers.fields if key.lower() == name]
    if not values:
        return default
    return ", ".join(value.decode("utf-8", "surrogateescape") for value in values)


def set_headers(headers: Headers, values: dict[bytes, str]) -> None:
    """`headers[name] = value` for each `name` (lower-case bytes) in turn, in one pass: a field already there
    keeps its place and spelling and takes the value, its repeats are dropped; the others are appended in
    order. Values are encoded as mitmproxy encodes them (UTF-8, surrogateescape)."""
    pending = {name: value.encode("utf-8", "surrogateescape") for name, value in values.items()}
    fields = []
    for field in headers.fields:
        name = field[0].lower()
        if name not in values:
            fields.append(field)
        elif name in pending:
            fields.append((field[0], pending.pop(name)))
    fields.extend(pending.items())
    headers.fields = tuple(fields)


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
