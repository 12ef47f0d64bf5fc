from __future__ import annotations

import itertools

from mitmproxy.http import Headers

from proxy.headers import header, set_headers, strip_hop_by_hop

NAMES = (b"X-Warden-Action", b"x-warden-action", b"Content-Type", b"connection")
VALUES = (b"a", b"b, c", b"\xff", b"")


def field_sets() -> list[tuple[tuple[bytes, bytes], ...]]:
    """Every header block of up to three fields over a few names (repeats, spellings) and values (folded,
    undecodable, empty)."""
    fields = [(n, v) for n in NAMES for v in VALUES]
    return [combo for size in range(4) for combo in itertools.product(fields, repeat=size)][::7]


def test_header_reads_what_mitmproxy_reads() -> None:
    for fields in field_sets():
        for name in (b"x-warden-action", b"content-type", b"absent"):
            assert header(Headers(fields), name, "default") == Headers(fields).get(name.decode(), "default")


def test_set_headers_writes_what_mitmproxy_writes_one_at_a_time() -> None:
    for fields in field_sets():
        for ours in ({b"x-warden-action": "block"}, {b"connection": "close", b"x-warden-action": "\udcff",
                                                      b"x-new": "v"}):
            expected, got = Headers(fields), Headers(fields)
            for name, value in ours.items():
                expected[name.decode()] = value
            set_headers(got, ours)
            assert got.fields == expected.fields


def test_strips_standard_and_listed_hop_by_hop_headers() -> None:
    headers = Headers(
        [(b"Connection", b"keep-alive, X-Trace-Hop"), (b"Keep-Alive", b"timeout=5"), (b"X-Trace-Hop", b"1"),
         (b"TE", b"trailers"), (b"Transfer-Encoding", b"chunked"), (b"X-End", b"kept")]
    )
    strip_hop_by_hop(headers)
    assert dict(headers) == {"Transfer-Encoding": "chunked", "X-End": "kept"}
