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
    __slots__ = ("_key", "_keyed")

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else secrets.token_bytes(32)
        # the keyed state made once and copied per digest: 3.3 us a digest against 5.5 us for hmac.new (two per
        # request; measured by a helper, session 11)
        self._keyed = hmac.new(self._key, digestmod=hashlib.sha256)

    def digest(self, data: bytes) -> str:
        h = self._keyed.copy()
        h.update(data)
        return h.hexdigest()

    def stream(self) -> hmac.HMAC:
        """An incremental digest, for answers that arrive in chunks."""
        return self._keyed.copy()
