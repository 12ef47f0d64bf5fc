"""Crash recovery (audit/recovery.py), read straight from disk: where the log stands, the torn tail cut."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from audit.checkpoint import parse_checkpoint
from audit.line import parse_line
from audit.recovery import boot_link, recover
from tests.audit.test_golden_log import GOLDEN


def copy_golden(tmp_path: Path) -> Path:
    directory = tmp_path / "log"
    shutil.copytree(GOLDEN / "log", directory)
    for path in directory.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return directory


def test_a_closed_log_recovers_to_its_last_checkpoint(tmp_path: Path) -> None:
    directory = copy_golden(tmp_path)
    recovered = recover(directory)
    head = parse_checkpoint((directory / "checkpoints" / "000000000006.json").read_bytes(), "6")
    assert recovered.head == head and recovered.size == recovered.next_seq == 19
    assert recovered.log_id == "60" * 16 and recovered.tail == [] and recovered.cut is None
    assert recovered.frontier.root() == head.checkpoint.root
    last_line = (directory / "segments" / "00000000000000000016.jsonl").read_bytes().split(b"\n")[-2]
    assert recovered.last_mac == parse_line(last_line)[0]
    assert boot_link(head.checkpoint) == {"n": 6, "hash": head.checkpoint.body_hash(), "size": 19,
                                          "root": head.checkpoint.root.hex()}
    assert boot_link(None) is None


def test_a_torn_tail_is_cut_to_a_quarantine_and_named(tmp_path: Path) -> None:
    directory = copy_golden(tmp_path)
    (directory / "checkpoints" / "000000000006.json").unlink()  # boot 3 crashed before its last checkpoint
    segment = directory / "segments" / "00000000000000000016.jsonl"
    complete = segment.read_bytes()
    segment.write_bytes(complete + b'{"_mac":"00')
    recovered = recover(directory)
    assert recovered.size == 16 and recovered.next_seq == 19 and len(recovered.tail_leaves) == 3
    assert segment.read_bytes() == complete
    assert recovered.cut == {"segment": "segments/00000000000000000016.jsonl", "offset": len(complete),
                             "bytes": 11, "sha256": hashlib.sha256(b'{"_mac":"00').hexdigest(),
                             "quarantine": f"00000000000000000016.jsonl.{len(complete)}.cut"}
    assert (tmp_path / "log-quarantine" / str(recovered.cut["quarantine"])).read_bytes() == b'{"_mac":"00'
