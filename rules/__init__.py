"""Pure, synchronous policy code: normalization, detectors, policy, masking, pseudonyms, rule files.

Nothing here imports mitmproxy, asyncio or anything else of ours (DESIGN sections 1 and 10).
"""
