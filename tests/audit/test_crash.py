"""SIGKILL a writer under load: every acknowledged record survives, and the log verifies after restart."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from audit.log import AuditLog
from audit.records import split_line
from audit.verify import Outcome
from tests.audit.conftest import Built, config, run_verify

WRITER = textwrap.dedent("""
    import sys, threading
    from pathlib import Path
    from audit.log import AuditConfig, AuditLog, Origin

    directory, boot = Path(sys.argv[1]), sys.argv[2]
    log = AuditLog.open(AuditConfig(directory=directory, origin=Origin("t", "ns", "pod", boot),
                                    checkpoint_interval=0.2, tick=0.01))
    out = threading.Lock()
    print("READY", flush=True)

    def work(k):
        i = 0
        while True:
            rid = f"{boot}-{k}-{i}"
            ticket = log.append("exchange", {"exchange": {"request_id": rid, "status": 200}})
            if ticket.wait(10):
                with out:
                    sys.stdout.write(f"ACK {ticket.seq} {rid}\\n")
                    sys.stdout.flush()
            i += 1

    for k in range(4):
        threading.Thread(target=work, args=(k,), daemon=True).start()
    threading.Event().wait()
""")


def _run_and_kill(directory: Path, boot: str, seconds: float) -> dict[int, str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(directory), boot], stdout=subprocess.PIPE,
                            env=env, text=True)
    assert proc.stdout is not None
    acked: dict[int, str] = {}
    assert proc.stdout.readline().strip() == "READY"

    def reader() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.split()
            if len(parts) == 3 and parts[0] == "ACK":
                acked[int(parts[1])] = parts[2]

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    time.sleep(seconds)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    thread.join(10)
    return acked


@pytest.mark.slow
def test_sigkill_under_load_loses_no_acknowledged_record(tmp_path: Path) -> None:
    directory = tmp_path / "log"
    acked: dict[int, str] = {}
    for run in range(2):  # the second run starts by recovering the first's crash, then is killed too
        acked.update(_run_and_kill(directory, f"run{run}", 1.5))
    assert len(acked) > 100
    log = AuditLog.open(config(directory, "after"))
    assert log.close(10)

    stored: dict[int, str] = {}
    for seg in sorted((directory / "segments").iterdir()):
        for line in seg.read_bytes().split(b"\n")[:-1]:
            obj = json.loads(split_line(line)[1])
            if obj["kind"] == "exchange":
                stored[obj["seq"]] = obj["exchange"]["request_id"]
    missing = {seq: rid for seq, rid in acked.items() if stored.get(seq) != rid}
    assert not missing, f"{len(missing)} acknowledged records lost or changed"

    report = run_verify(Built(tmp_path, directory, tmp_path / "keys"))
    assert report.outcome == Outcome.VALID, report.problems
    assert report.boots == 3
    assert all(p.severity != "error" for p in report.problems)
