from __future__ import annotations

from mitmproxy.http import Headers

from proxy.headers import strip_hop_by_hop


def test_strips_standard_and_listed_hop_by_hop_headers() -> None:
    headers = Headers(
        [(b"Connection", b"keep-alive, X-Trace-Hop"), (b"Keep-Alive", b"timeout=5"), (b"X-Trace-Hop", b"1"),
         (b"TE", b"trailers"), (b"Transfer-Encoding", b"chunked"), (b"X-End", b"kept")]
    )
    strip_hop_by_hop(headers)
    assert dict(headers) == {"Transfer-Encoding": "chunked", "X-End": "kept"}
