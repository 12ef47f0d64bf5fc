"""Checkpoint signers (local ECDSA P-256 key, AWS KMS Sign) and the verifier's key ring.

Signatures are ECDSA P-256 over SHA-256 of the raw canonical checkpoint body (FIPS 186-4, DER-encoded as in
RFC 5480 / X9.62), which is what KMS `Sign` returns for ECDSA_SHA_256 with MessageType RAW. A key is named by
its fingerprint: "sha256:" + hex SHA-256 of the DER SubjectPublicKeyInfo.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from audit.errors import ConfigError, SignerError
from audit.keys import kms_client, write_secret

ALGORITHM = "ecdsa-p256-sha256"
SIGNING_KEY_FILE = "signing.pem"
PUBLIC_KEY_FILE = "signing.pub.pem"


def fingerprint(public_key_der: bytes) -> str:
    return "sha256:" + hashlib.sha256(public_key_der).hexdigest()


def public_der(key: ec.EllipticCurvePublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


class Signer(Protocol):
    """Plug-in point for checkpoint signing."""

    @property
    def fingerprint(self) -> str: ...

    @property
    def public_key_der(self) -> bytes: ...

    def sign(self, message: bytes) -> bytes: ...


class LocalSigner:
    """An ECDSA P-256 private key in a PEM file (created with mode 0600 on first use, public key beside it)."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey) -> None:
        if not isinstance(private_key.curve, ec.SECP256R1):
            raise ConfigError("signing key must be on P-256", expected="secp256r1", found=private_key.curve.name)
        self._key = private_key
        self._der = public_der(private_key.public_key())
        self._fingerprint = fingerprint(self._der)

    @classmethod
    def from_file(cls, path: Path, *, create: bool = False) -> LocalSigner:
        if create and not path.exists():
            key = ec.generate_private_key(ec.SECP256R1())
            pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
            if write_secret(path, pem):
                pub = key.public_key().public_bytes(serialization.Encoding.PEM,
                                                    serialization.PublicFormat.SubjectPublicKeyInfo)
                write_secret(path.with_name(PUBLIC_KEY_FILE if path.name == SIGNING_KEY_FILE
                                            else path.name + ".pub"), pub)
        try:
            loaded = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise ConfigError("cannot load the signing key", where=str(path), found=type(exc).__name__) from exc
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise ConfigError("signing key is not an EC key", where=str(path), found=type(loaded).__name__)
        return cls(loaded)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def public_key_der(self) -> bytes:
        return self._der

    def public_key_pem(self) -> bytes:
        return self._key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo)

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message, ec.ECDSA(hashes.SHA256()))


class KmsSigner:
    """AWS KMS `Sign` with ECDSA_SHA_256 over the RAW message (KMS hashes it; the body stays < 4096 bytes).

    The public key is fetched once at construction, so an unusable key is a start-up error (fail closed).
    """

    def __init__(self, key_id: str, *, endpoint_url: str | None = None, region: str | None = None,
                 client: Any = None) -> None:
        self.key_id = key_id
        self._client: Any = client if client is not None else kms_client(endpoint_url, region)
        try:
            out = self._client.get_public_key(KeyId=key_id)
        except Exception as exc:  # botocore: every failure means the signer is unusable
            raise SignerError("KMS GetPublicKey failed", where=key_id, found=f"{type(exc).__name__}: {exc}") \
                from exc
        if "ECDSA_SHA_256" not in out.get("SigningAlgorithms", []):
            raise SignerError("KMS key cannot sign ECDSA_SHA_256", where=key_id,
                              found=out.get("SigningAlgorithms"))
        self._der = bytes(out["PublicKey"])
        self._fingerprint = fingerprint(self._der)

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def public_key_der(self) -> bytes:
        return self._der

    def sign(self, message: bytes) -> bytes:
        if len(message) > 4096:
            raise SignerError("checkpoint body exceeds the KMS RAW message limit", expected="<= 4096",
                              found=len(message))
        try:
            out = self._client.sign(KeyId=self.key_id, Message=message, MessageType="RAW",
                                    SigningAlgorithm="ECDSA_SHA_256")
        except Exception as exc:
            raise SignerError("KMS Sign failed", where=self.key_id, found=f"{type(exc).__name__}: {exc}") \
                from exc
        return bytes(out["Signature"])


def load_public_key(data: bytes) -> ec.EllipticCurvePublicKey:
    """A P-256 public key from PEM or DER SubjectPublicKeyInfo."""
    try:
        key = (serialization.load_pem_public_key(data) if data.lstrip().startswith(b"-----")
               else serialization.load_der_public_key(data))
    except ValueError as exc:
        raise ConfigError("not a public key (PEM or DER SubjectPublicKeyInfo)") from exc
    if not isinstance(key, ec.EllipticCurvePublicKey) or not isinstance(key.curve, ec.SECP256R1):
        raise ConfigError("public key is not ECDSA P-256", found=type(key).__name__)
    return key


class KeyRing:
    """The public keys a verifier trusts, by fingerprint."""

    def __init__(self) -> None:
        self._keys: dict[str, ec.EllipticCurvePublicKey] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def add(self, key: ec.EllipticCurvePublicKey) -> str:
        fp = fingerprint(public_der(key))
        self._keys[fp] = key
        return fp

    def add_bytes(self, data: bytes) -> str:
        return self.add(load_public_key(data))

    def add_kms(self, key_id: str, *, endpoint_url: str | None = None, region: str | None = None) -> str:
        client = kms_client(endpoint_url, region)
        try:
            der = bytes(client.get_public_key(KeyId=key_id)["PublicKey"])
        except Exception as exc:
            raise SignerError("KMS GetPublicKey failed", where=key_id, found=f"{type(exc).__name__}: {exc}") \
                from exc
        return self.add_bytes(der)

    def fingerprints(self) -> list[str]:
        return sorted(self._keys)

    def verify(self, key_fingerprint: str, message: bytes, signature: bytes) -> bool | None:
        """ECDSA P-256 / SHA-256 (FIPS 186-4) check: True valid, False invalid, None key not in the ring."""
        key = self._keys.get(key_fingerprint)
        if key is None:
            return None
        try:
            key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return False
        return True
