"""Crash recovery, run once when a log is opened: read what the last boot left, cut a torn tail, link the boot.

DESIGN section 7, crash safety: "a torn last line is detected and cut on restart; the new boot links to the last
checkpoint". The newest checkpoint and the segments it seals are trusted as written (the verifier judges them);
segments after it are the unanchored tail, read record by record up to the first line that is not the next
record. Nothing here runs a thread or writes a record: the writer continues from `Recovered`, the roller anchors
its tail before the new boot's first record.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from audit.checkpoint import (
    CHECKPOINT_DIR,
    SEGMENT_DIR,
    Checkpoint,
    CheckpointFormatError,
    SegmentRef,
    SignedCheckpoint,
    parse_checkpoint,
)
from audit.errors import ConfigError, RecordError
from audit.line import parse_line, read_seq
from audit.merkle import CompactRange, leaf_hash
from audit.records import GENESIS_MAC
from audit.stores import TMP_PREFIX


@dataclass(frozen=True, slots=True)
class Recovered:
    """Where the log stands on disk: the writer continues after `size + len(tail_leaves)` records."""

    log_id: str
    size: int  # records covered by the newest checkpoint
    last_mac: bytes
    frontier: CompactRange  # the tree over every record on disk, tail included
    head_tree: CompactRange  # the tree as of the newest checkpoint
    head: SignedCheckpoint | None
    tail: list[SegmentRef]  # complete, now read-only segments after the newest checkpoint
    tail_leaves: list[bytes]
    cut: dict[str, object] | None  # what was cut from a torn tail, for the boot record

    @property
    def next_seq(self) -> int:
        return self.size + sum(s.last - s.first + 1 for s in self.tail)


def boot_link(head: Checkpoint | None) -> dict[str, object] | None:
    """What a boot's first record names as its predecessor: the newest checkpoint (None for a new log)."""
    if head is None:
        return None
    return {"n": head.n, "hash": head.body_hash(), "size": head.size, "root": head.root.hex()}


def read_lines(path: Path) -> tuple[list[bytes], int]:
    """Complete lines of a segment and the byte length they span (anything after is a torn write)."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    return (data[:end].split(b"\n")[:-1] if end else []), end


def recover(directory: Path) -> Recovered:
    head = _latest_checkpoint(directory)
    size = head.checkpoint.size if head else 0
    segments = _segment_files(directory)
    tree = _tree_at(directory, head)
    last_mac = GENESIS_MAC
    sealed = [(f, p) for f, p in segments if f < size]
    if sealed:
        lines, _ = read_lines(sealed[-1][1])
        if lines:
            last_mac, _ = parse_line(lines[-1])
    tail_files = [(f, p) for f, p in segments if f >= size]
    tail: list[SegmentRef] = []
    leaves: list[bytes] = []
    cut: dict[str, object] | None = None
    expected = size
    for index, (first, path) in enumerate(tail_files):
        if first != expected:
            raise ConfigError("unanchored segments are not contiguous with the log", where=str(path),
                              expected=expected, found=first)
        data = path.read_bytes()
        offset = 0
        good_end = 0
        file_leaves: list[bytes] = []
        for line in data.split(b"\n")[:-1]:
            if read_seq(line) != expected:
                break
            offset += len(line) + 1
            good_end = offset
            file_leaves.append(leaf_hash(line))
            last_mac = parse_line(line)[0]
            expected += 1
        if good_end != len(data):
            if index != len(tail_files) - 1:
                raise ConfigError("a damaged segment is followed by another; refusing to guess",
                                  where=str(path))
            cut = _cut(directory, path, data, good_end)
        if good_end == 0:
            path.unlink()  # nothing complete in it: a segment opened just before the crash
            continue
        os.chmod(path, 0o444)
        tail.append(SegmentRef(f"{SEGMENT_DIR}/{path.name}", hashlib.sha256(data[:good_end]).hexdigest(),
                               good_end, first, expected - 1))
        leaves.extend(file_leaves)
    full = tree.copy()
    for leaf in leaves:
        full.append(leaf)
    log_id = head.checkpoint.log if head else _log_id_from_segments(segments) or secrets.token_hex(16)
    return Recovered(log_id, size, last_mac, full, tree, head, tail, leaves, cut)


def _cut(directory: Path, path: Path, data: bytes, good_end: int) -> dict[str, object]:
    """Cut a segment back to its last complete record; returns what the boot record says about the cut.

    Never destroy bytes: what is cut goes to a quarantine beside the log (outside what is verified and shipped),
    and the boot record names it with its hash. Usually it is a torn, never acknowledged write; if it was media
    damage, the records are still there to inspect."""
    removed = data[good_end:]
    quarantine = directory.absolute().parent / f"{directory.name}-quarantine"
    quarantine.mkdir(parents=True, exist_ok=True)
    kept = quarantine / f"{path.name}.{good_end}.cut"
    kept.write_bytes(removed)
    os.chmod(path, 0o644)
    with open(path, "r+b") as fh:
        fh.truncate(good_end)
        fh.flush()
        os.fsync(fh.fileno())
    return {"segment": f"{SEGMENT_DIR}/{path.name}", "offset": good_end, "bytes": len(removed),
            "sha256": hashlib.sha256(removed).hexdigest(), "quarantine": kept.name}


def _segment_files(directory: Path) -> list[tuple[int, Path]]:
    out = []
    for path in (directory / SEGMENT_DIR).iterdir():
        if path.name.startswith(TMP_PREFIX):
            path.unlink()
            continue
        stem = path.name.removesuffix(".jsonl")
        if stem.isdigit() and path.name.endswith(".jsonl"):
            out.append((int(stem), path))
    return sorted(out)


def _latest_checkpoint(directory: Path) -> SignedCheckpoint | None:
    best: tuple[int, Path] | None = None
    for path in (directory / CHECKPOINT_DIR).iterdir():
        if path.name.startswith(TMP_PREFIX):
            path.unlink()
            continue
        stem = path.name.removesuffix(".json")
        if stem.isdigit() and (best is None or int(stem) > best[0]):
            best = (int(stem), path)
    if best is None:
        return None
    try:
        return parse_checkpoint(best[1].read_bytes(), str(best[1]))
    except (CheckpointFormatError, OSError) as exc:
        raise ConfigError("the newest checkpoint is unreadable; refusing to continue the log",
                          where=str(best[1])) from exc


def _rescan(directory: Path, size: int) -> CompactRange:
    """Rebuild the tree of the first `size` records from the segments (when the frontier hint is unusable)."""
    tree = CompactRange()
    for first, path in _segment_files(directory):
        if first >= size:
            break
        lines, _ = read_lines(path)
        for line in lines[:size - tree.size]:
            tree.append(leaf_hash(line))
    if tree.size != size:
        raise ConfigError("segments hold fewer records than the newest checkpoint", where=str(directory),
                          expected=size, found=tree.size)
    return tree


def _tree_at(directory: Path, head: SignedCheckpoint | None) -> CompactRange:
    if head is None:
        return CompactRange()
    size = head.checkpoint.size
    if len(head.frontier) == size.bit_count():
        tree = CompactRange(size, head.frontier)
        if tree.root() == head.checkpoint.root:
            return tree
    tree = _rescan(directory, size)
    if tree.root() != head.checkpoint.root:
        raise ConfigError("segments do not match the newest checkpoint's root", where=str(directory))
    return tree


def _log_id_from_segments(segments: list[tuple[int, Path]]) -> str | None:
    if not segments or segments[0][0] != 0:
        return None
    lines, _ = read_lines(segments[0][1])
    if not lines:
        return None
    try:
        obj = json.loads(parse_line(lines[0])[1])
    except (RecordError, ValueError, RecursionError):
        return None
    log_id = obj.get("log") if isinstance(obj, dict) else None
    return log_id if isinstance(log_id, str) else None
