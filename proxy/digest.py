"""Keyed digests of request and answer content for spans and audit records.

A plain SHA-256 of an ID number is brute-forceable (18 digits with a checksum and a date); an HMAC with a
key the reader does not have is not. The key comes from the audit log when one is configured (so audit
records and spans agree), otherwise it is random per process.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


class Digester:
    __slots__ = ("_key",)

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)

    def digest(self, data: bytes) -> str:
        return hmac.new(self._key, data, hashlib.sha256).hexdigest()

    def stream(self) -> hmac.HMAC:
        """An incremental digest, for answers that arrive in chunks."""
        return hmac.new(self._key, digestmod=hashlib.sha256)
