"""Bodies from outside: decoded bounded (a compressed body may not expand past the size limit), and written
back as JSON when the guard rewrites them.

mitmproxy's own `get_content()` decompresses without a bound, so an 8 MiB gzip bomb could become gigabytes
in memory. Bodies we inspect are decoded here instead; encodings we cannot bound are refused (fail closed).
"""

from __future__ import annotations

import json
import zlib

from proxy.errors import ApiError, body_too_large, unsupported_encoding


class BodyError(Exception):
    """The body cannot be inspected; `error` is the answer to give."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(error.message)
        self.error = error


def decode(raw: bytes, content_encoding: str, limit: int) -> bytes:
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        return raw
    if encoding in ("gzip", "x-gzip", "deflate"):
        # wbits 47 = auto-detect gzip or zlib headers; raw deflate (wbits -15) is the fallback for "deflate".
        for wbits in ((47,) if encoding != "deflate" else (47, -15)):
            try:
                inflater = zlib.decompressobj(wbits)
                out = inflater.decompress(raw, limit + 1)
            except zlib.error:
                continue
            if len(out) > limit or inflater.unconsumed_tail:
                raise BodyError(body_too_large(limit))
            return out
        raise BodyError(ApiError(400, "invalid_request_error", "invalid_encoding",
                                 f"The body is not valid {encoding} data."))
    raise BodyError(unsupported_encoding(encoding))


def json_bytes(obj: object) -> bytes:
    """`obj` as the JSON of a rewritten body or event, UTF-8 as it came. Text UTF-8 cannot hold (a lone
    surrogate a client or the upstream escaped, `"\\ud800"`, which the standard library's parser accepts) is
    written escaped again, as it came, and the other side decides what to make of it: `encode()` raised here
    before, and the exchange failed closed with a 500 (or the stream ended) over a masked phone number."""
    text = json.dumps(obj, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(obj).encode()
