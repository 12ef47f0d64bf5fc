from __future__ import annotations

import pytest
from mitmproxy.test import tutils

from proxy.stages.correlate import frame_body_for_http1


@pytest.mark.parametrize(("version", "headers", "content", "length"), [
    ("HTTP/2.0", {}, b'{"a": 1}', "8"),  # the case that needs it
    ("HTTP/2.0", {"content-length": "8"}, b'{"a": 1}', "8"),  # already framed
    ("HTTP/2.0", {"transfer-encoding": "chunked"}, b'{"a": 1}', None),  # framed by chunks
    ("HTTP/2.0", {}, b"", None),  # no body
    ("HTTP/1.1", {}, b'{"a": 1}', None),  # HTTP/1 framing is the client's and was read as such
])
def test_an_http2_body_gets_a_content_length_only_when_it_lacks_framing(
    version: str, headers: dict[str, str], content: bytes, length: str | None
) -> None:
    request = tutils.treq(http_version=version.encode(), content=b"")
    request.headers.clear()
    request.headers.update(headers)
    request.raw_content = content
    frame_body_for_http1(request)
    assert request.headers.get("content-length") == length
