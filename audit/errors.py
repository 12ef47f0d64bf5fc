"""The one exception root of `audit`; every error carries its evidence (expected vs found, where)."""

from __future__ import annotations


class AuditError(Exception):
    """Root of every error raised by the `audit` package."""

    def __init__(self, message: str, *, expected: object = None, found: object = None,
                 where: str | None = None) -> None:
        self.expected = expected
        self.found = found
        self.where = where
        text = message
        if where is not None:
            text = f"{where}: {text}"
        if expected is not None or found is not None:
            text += f" (expected {expected!r}, found {found!r})"
        super().__init__(text)


class ConfigError(AuditError):
    """The audit configuration is unusable (bad origin part, unreadable key file, missing bucket)."""


class RecordError(AuditError):
    """A record body cannot be written canonically (a float, a reserved or malformed key, bad UTF-8)."""


class ProofError(AuditError):
    """A Merkle proof is malformed or does not verify."""


class KeyUnavailableError(AuditError):
    """A chain key or digest key could not be produced or unwrapped (no key file, KMS refused or unreachable)."""


class EpochKeyUnknownError(KeyUnavailableError):
    """The key source answered, but does not hold the key an epoch's descriptor names (another local master key,
    a KMS key that does not exist). Says something about the record only if the source opens other epochs."""


class EpochKeyInvalidError(KeyUnavailableError):
    """An epoch's descriptor is not one a writer wrote: malformed, or its wrapped key does not decrypt (under its
    encryption context) with the very key it names. Says something about the record whatever else opens."""


class SignerError(AuditError):
    """The signer failed to sign or its public key could not be obtained."""


class StoreError(AuditError):
    """A checkpoint or segment could not be stored or fetched."""


class LogClosedError(AuditError):
    """`append` was called on a log that is closing or closed."""
