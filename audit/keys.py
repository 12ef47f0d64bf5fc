"""Key providers for the chain keys K_epoch, and the digest key.

A provider hands out a fresh data key per epoch together with a descriptor that is stored in the epoch's first
record: the wrapped key and its encryption context, enough for a verifier holding the provider's master key
(or KMS Decrypt permission) to get K_epoch back. The local provider mirrors KMS GenerateDataKey with
AES-256-GCM, the context as associated data.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from audit.canonical import encode
from audit.errors import ConfigError, EpochKeyInvalidError, EpochKeyUnknownError, KeyUnavailableError

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

KEY_SIZE = 32
CHAIN_KEY_FILE = "chain.key"
DIGEST_KEY_FILE = "digest.key"

# KMS Decrypt errors that are KMS's answer about this ciphertext and key id; every other one (unreachable,
# throttled, access denied, KMSInternalException) says only that the key source is unavailable.
_KMS_DECRYPT_REFUSALS: dict[str, type[KeyUnavailableError]] = {
    "NotFoundException": EpochKeyUnknownError,
    "InvalidCiphertextException": EpochKeyInvalidError,
    "IncorrectKeyException": EpochKeyInvalidError,
}


@dataclass(frozen=True, slots=True)
class EpochKey:
    """A plaintext chain key and the descriptor (JSON-safe) that lets a verifier recover it."""

    key: bytes
    descriptor: Mapping[str, object]

    def __repr__(self) -> str:  # never print key material
        return f"EpochKey(descriptor={dict(self.descriptor)!r})"


class KeyProvider(Protocol):
    """Plug-in point for K_epoch: GenerateDataKey-like `new_key`, Decrypt-like `unwrap`."""

    @property
    def name(self) -> str: ...

    def new_key(self, context: Mapping[str, str]) -> EpochKey: ...

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes: ...


def write_secret(path: Path, data: bytes) -> bool:
    """Create `path` with mode 0600 unless it exists; True when this call created it (race-safe)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return True


def load_hex_key(path: Path) -> bytes:
    try:
        text = path.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise KeyUnavailableError("cannot read key file", where=str(path), found=type(exc).__name__) from exc
    if len(key) != KEY_SIZE:
        raise KeyUnavailableError("key file holds a key of the wrong size", where=str(path),
                                  expected=KEY_SIZE, found=len(key))
    return key


def load_or_create_hex_key(path: Path) -> bytes:
    """The 32-byte key in `path` (hex), created from os.urandom on first use."""
    write_secret(path, os.urandom(KEY_SIZE).hex().encode("ascii") + b"\n")
    return load_hex_key(path)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise EpochKeyInvalidError(f"{what} is not base64 text", found=type(value).__name__)
    try:
        return base64.b64decode(value, validate=True)
    except ValueError as exc:
        raise EpochKeyInvalidError(f"{what} is not base64", found=value[:40]) from exc


def _context(descriptor: Mapping[str, object]) -> dict[str, str]:
    ctx = descriptor.get("context")
    if not isinstance(ctx, Mapping) or not all(isinstance(v, str) for v in ctx.values()):
        raise EpochKeyInvalidError("key descriptor has no string encryption context", found=ctx)
    return {str(k): str(v) for k, v in ctx.items()}


class LocalKeyProvider:
    """Wraps per-epoch keys with a 32-byte master key kept in a local file (created on first use)."""

    name = "local"

    def __init__(self, master_key: bytes) -> None:
        if len(master_key) != KEY_SIZE:
            raise ConfigError("local master key has the wrong size", expected=KEY_SIZE, found=len(master_key))
        self._aead = AESGCM(master_key)
        self.key_id = "local:" + hashlib.sha256(b"warden-audit-chain-key\x00" + master_key).hexdigest()[:32]

    @classmethod
    def from_file(cls, path: Path, *, create: bool = False) -> LocalKeyProvider:
        return cls(load_or_create_hex_key(path) if create else load_hex_key(path))

    def new_key(self, context: Mapping[str, str]) -> EpochKey:
        key = os.urandom(KEY_SIZE)
        nonce = os.urandom(12)
        wrapped = nonce + self._aead.encrypt(nonce, key, encode(dict(context)))
        return EpochKey(key, {"provider": self.name, "key_id": self.key_id, "wrapped": _b64(wrapped),
                              "context": dict(context)})

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        if descriptor.get("key_id") != self.key_id:
            raise EpochKeyUnknownError("epoch key was wrapped by another local key", expected=self.key_id,
                                       found=descriptor.get("key_id"))
        wrapped = _unb64(descriptor.get("wrapped"), "wrapped key")
        try:
            return self._aead.decrypt(wrapped[:12], wrapped[12:], encode(_context(descriptor)))
        except (InvalidTag, ValueError) as exc:
            raise EpochKeyInvalidError("wrapped epoch key does not decrypt under its context",
                                       found=descriptor.get("context")) from exc


def kms_client(endpoint_url: str | None = None, region: str | None = None) -> KMSClient:
    import boto3

    return boto3.client("kms", endpoint_url=endpoint_url, region_name=region or os.environ.get(
        "AWS_REGION", os.environ.get("AWS_DEFAULT_REGION", "us-east-1")))


class KmsKeyProvider:
    """AWS KMS GenerateDataKey (AES_256) with an encryption context; Decrypt to unwrap."""

    name = "aws-kms"

    def __init__(self, key_id: str, *, endpoint_url: str | None = None, region: str | None = None,
                 client: Any = None) -> None:
        self.key_id = key_id
        self._client: Any = client if client is not None else kms_client(endpoint_url, region)

    def new_key(self, context: Mapping[str, str]) -> EpochKey:
        try:
            out = self._client.generate_data_key(KeyId=self.key_id, KeySpec="AES_256",
                                                 EncryptionContext=dict(context))
        except Exception as exc:  # botocore raises many unrelated types; all mean "no key"
            raise KeyUnavailableError("KMS GenerateDataKey failed", where=self.key_id,
                                      found=f"{type(exc).__name__}: {exc}") from exc
        return EpochKey(bytes(out["Plaintext"]), {
            "provider": self.name, "key_id": str(out.get("KeyId", self.key_id)),
            "wrapped": _b64(bytes(out["CiphertextBlob"])), "context": dict(context)})

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        wrapped = _unb64(descriptor.get("wrapped"), "wrapped key")
        context = _context(descriptor)
        key_id = descriptor.get("key_id")
        try:
            out = self._client.decrypt(CiphertextBlob=wrapped, EncryptionContext=context,
                                       **({"KeyId": key_id} if isinstance(key_id, str) else {}))
        except Exception as exc:
            found = f"{type(exc).__name__}: {exc}"
            error = _KMS_DECRYPT_REFUSALS.get(_aws_error_code(exc), KeyUnavailableError)
            raise error("KMS Decrypt refused the epoch key", where=str(key_id), found=found) from exc
        return bytes(out["Plaintext"])


def _aws_error_code(exc: BaseException) -> str:
    """botocore's ClientError code (`exc.response["Error"]["Code"]`) without importing botocore."""
    response = getattr(exc, "response", None)
    error = response.get("Error") if isinstance(response, dict) else None
    code = error.get("Code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else ""


class Unwrapper:
    """Verifier side: routes each epoch descriptor to whichever provider can open it, caching results."""

    def __init__(self, providers: list[KeyProvider]) -> None:
        self._providers = {p.name: p for p in providers}
        self._cache: dict[bytes, bytes] = {}

    @property
    def empty(self) -> bool:
        return not self._providers

    def unwrap(self, descriptor: Mapping[str, object]) -> bytes:
        provider = self._providers.get(str(descriptor.get("provider")))
        if provider is None:
            raise KeyUnavailableError("no key provider for this epoch", expected=sorted(self._providers),
                                      found=descriptor.get("provider"))
        cache_key = encode(dict(descriptor))
        hit = self._cache.get(cache_key)
        if hit is None:
            hit = self._cache[cache_key] = provider.unwrap(descriptor)
        return hit
