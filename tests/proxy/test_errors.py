from __future__ import annotations

import pytest

from proxy.errors import mitm_error, upstream_failure


@pytest.mark.parametrize(("message", "said"), [
    ("Error connecting to '10.0.3.7:8000': [Errno 111] Connect call failed ('10.0.3.7', 8000)",
     "the connection failed"),
    ("[Errno 111] Connection refused", "the connection was refused"),
    ("Connection reset by peer", "the connection was reset"),
    ("unexpected server response: b'HTTP/1.1 200 OK\\r\\n110105199003071239'", "it sent an invalid HTTP response"),
    ("Cannot parse HTTP response: bad status line", "it sent an invalid HTTP response"),
    ("server closed connection", "it closed the connection"),
])
def test_upstream_failures_are_told_in_our_words(message: str, said: str) -> None:
    assert upstream_failure(message) == said
    error = mitm_error(502, message)
    assert error.code == "upstream_unavailable"
    assert error.message == f"The model server is unavailable: {said}."
    assert "10.0.3.7" not in error.message and "110105" not in error.message


def test_mitmproxys_own_statuses_keep_openai_codes() -> None:
    assert mitm_error(431, "The request head exceeds the limit of 65536 bytes.").code == "request_header_too_large"
    assert mitm_error(408, "slow").code == "request_timeout"
    too_big = mitm_error(502, "The model server's answer exceeds the limit of 10 bytes.")
    assert (too_big.status, too_big.code) == (502, "response_too_large")
