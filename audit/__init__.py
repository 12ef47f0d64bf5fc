"""Tamper-evident audit: records, HMAC chain, RFC 6962 Merkle tree, checkpoints, signers, stores, verifier.

Imports nothing of ours and needs only `cryptography`; boto3 is imported lazily by the AWS adapters.
"""
