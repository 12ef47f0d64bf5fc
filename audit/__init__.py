"""Tamper-evident audit: records, HMAC chain, RFC 6962 Merkle tree, checkpoints, signers, stores, verifier.

Imports nothing of ours and needs only `cryptography`; boto3 is imported lazily by the AWS adapters.

The writer side, for the proxy::

    log = AuditLog.open(AuditConfig(directory=Path("/var/lib/warden/audit"), origin=Origin(...)))
    ticket = log.append("exchange", ExchangeRecord(...).to_body())   # never blocks
    ticket.wait(timeout)                                             # durable after group commit
    await asyncio.wrap_future(ticket.completion())                   # the same, from an event loop
    log.digest(raw_bytes); log.anchor_lag_seconds(); log.stats(); log.healthy()
    log.close(timeout)                                               # shutdown record + final checkpoint

The verifier side is `warden audit verify|prove|show` (audit.cli) or `audit.verify.verify(...)`.
"""

from audit.log import AppendTicket, AuditConfig, AuditLog, AuditStats, Origin, aws_config
from audit.records import ExchangeRecord, Kind, Verdict

__all__ = ["AppendTicket", "AuditConfig", "AuditLog", "AuditStats", "ExchangeRecord", "Kind", "Origin",
           "Verdict", "aws_config"]
