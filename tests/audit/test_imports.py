"""The audit package stands alone: stdlib + cryptography at import time, no asyncio, no mitmproxy, no boto3."""

from __future__ import annotations

import subprocess
import sys


def test_audit_imports_nothing_of_ours_nor_asyncio_nor_boto3() -> None:
    code = (
        "import sys\n"
        "import audit.cli, audit.log, audit.verify, audit.stores, audit.keys, audit.signers\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'asyncio', 'mitmproxy', 'boto3', 'botocore', 'proxy', 'rules', 'models', 'onnxruntime'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == ""
