"""The offline verifier: every record, MAC, chain link, root, signature, consistency proof and file.

It trusts nothing in the store: only the public keys it is given (and, optionally, the chain-key providers
and a checkpoint kept from an earlier run). Each problem carries a stable code, a severity and the exact
place (file, line, seq, checkpoint). Severities map to the CLI's exit codes: any ERROR is an integrity
failure; otherwise any INCONCLUSIVE means the log could not be fully judged; WARNING and INFO never fail.

Chain keys. A signed checkpoint proves the records it covers; the records after the newest one (the unanchored
tail) are attested by their MACs alone, so a tail whose MACs cannot be checked is never valid. For each epoch
record whose key K_epoch the run cannot get:

- its descriptor is not one a writer writes (malformed; a wrapped key that does not decrypt under the very key
  it names; a key source that changes within a boot): EPOCH_KEY_INVALID, an integrity failure wherever the
  record is, signed or not;
- the record is unanchored and names a key that a key source the verifier holds does not know, while that
  source opens the log's other epochs: EPOCH_KEY_UNKNOWN, an integrity failure (anyone can append an epoch
  record naming a key of their own and then records with made-up MACs; a chain key rotated at a restart that
  crashed before its first checkpoint looks the same until the verifier is given the new key too);
- otherwise the key is unavailable (no chain key given, a provider the verifier lacks, a key file that opens
  none of the log's epochs, KMS unreachable or access denied, or a signed epoch record naming a key the
  verifier lacks): TAIL_KEY_UNAVAILABLE, inconclusive, if any of its records are in the tail; else
  MAC_KEY_UNAVAILABLE, information only, because the signed roots already prove those records (no chain key
  given at all: not reported, as checking signatures alone is a supported mode).
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

from audit.canonical import MAX_SAFE_INT, encode, parse_ts
from audit.checkpoint import (
    CHECKPOINT_DIR,
    SEGMENT_DIR,
    Checkpoint,
    CheckpointFormatError,
    SegmentRef,
    SignedCheckpoint,
    checkpoint_name,
    parse_checkpoint,
)
from audit.errors import (
    AuditError,
    EpochKeyInvalidError,
    EpochKeyUnknownError,
    KeyUnavailableError,
    ProofError,
    RecordError,
)
from audit.keys import Unwrapper
from audit.line import parse_line, read_header
from audit.merkle import CompactRange, verify_consistency
from audit.records import GENESIS_MAC, LIFECYCLE_KINDS, Kind
from audit.signers import KeyRing
from audit.stores import TMP_PREFIX, Source

_LIFECYCLE = frozenset(str(k) for k in LIFECYCLE_KINDS)


class Severity(StrEnum):
    ERROR = "error"
    INCONCLUSIVE = "inconclusive"
    WARNING = "warning"
    INFO = "info"


class Code(StrEnum):
    """Stable problem codes. Never rename one: scripts match on them."""

    RECORD_MALFORMED = "RECORD_MALFORMED"
    RECORD_MAC_INVALID = "RECORD_MAC_INVALID"
    RECORD_SEQ_GAP = "RECORD_SEQ_GAP"
    RECORD_SEQ_DUP = "RECORD_SEQ_DUP"
    RECORD_SEQ_ORDER = "RECORD_SEQ_ORDER"
    ROOT_MISMATCH = "ROOT_MISMATCH"
    CHAIN_BROKEN = "CHAIN_BROKEN"
    SIG_INVALID = "SIG_INVALID"
    KEY_UNKNOWN = "KEY_UNKNOWN"
    KEY_UNAVAILABLE = "KEY_UNAVAILABLE"
    MAC_KEY_UNAVAILABLE = "MAC_KEY_UNAVAILABLE"
    EPOCH_KEY_INVALID = "EPOCH_KEY_INVALID"
    EPOCH_KEY_UNKNOWN = "EPOCH_KEY_UNKNOWN"
    TAIL_KEY_UNAVAILABLE = "TAIL_KEY_UNAVAILABLE"
    CONSISTENCY_FAIL = "CONSISTENCY_FAIL"
    CHECKPOINT_MALFORMED = "CHECKPOINT_MALFORMED"
    CHECKPOINT_MISSING = "CHECKPOINT_MISSING"
    CHECKPOINT_DUP = "CHECKPOINT_DUP"
    CHECKPOINT_MISPLACED = "CHECKPOINT_MISPLACED"
    CHECKPOINT_INVALID = "CHECKPOINT_INVALID"
    SEGMENT_MISSING = "SEGMENT_MISSING"
    SEGMENT_MODIFIED = "SEGMENT_MODIFIED"
    SEGMENT_UNREFERENCED = "SEGMENT_UNREFERENCED"
    UNANCHORED_TAIL = "UNANCHORED_TAIL"
    TORN_TAIL = "TORN_TAIL"
    STALE_TAIL = "STALE_TAIL"
    ROLLBACK = "ROLLBACK"
    FORK = "FORK"
    TRUSTED_STATE_INVALID = "TRUSTED_STATE_INVALID"
    STORE_OVERWRITTEN = "STORE_OVERWRITTEN"
    STORE_DELETE_MARKER = "STORE_DELETE_MARKER"
    STORE_UNREADABLE = "STORE_UNREADABLE"
    TEMP_FILE = "TEMP_FILE"
    NOTHING_TO_VERIFY = "NOTHING_TO_VERIFY"


SEVERITY: dict[Code, Severity] = {code: Severity.ERROR for code in Code}
SEVERITY.update({
    Code.KEY_UNAVAILABLE: Severity.INCONCLUSIVE,
    Code.NOTHING_TO_VERIFY: Severity.INCONCLUSIVE,
    Code.STORE_UNREADABLE: Severity.INCONCLUSIVE,
    Code.TAIL_KEY_UNAVAILABLE: Severity.INCONCLUSIVE,
    Code.MAC_KEY_UNAVAILABLE: Severity.INFO,
    Code.UNANCHORED_TAIL: Severity.WARNING,
    Code.TORN_TAIL: Severity.WARNING,
    Code.TEMP_FILE: Severity.WARNING,
})


@dataclass(frozen=True, slots=True)
class Problem:
    code: Code
    message: str
    file: str | None = None
    line: int | None = None
    seq: int | None = None
    checkpoint: int | None = None

    @property
    def severity(self) -> Severity:
        return SEVERITY[self.code]

    def where(self) -> str:
        parts = []
        if self.file is not None:
            parts.append(self.file if self.line is None else f"{self.file}:{self.line}")
        if self.seq is not None:
            parts.append(f"seq {self.seq}")
        if self.checkpoint is not None:
            parts.append(f"checkpoint {self.checkpoint}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, object]:
        return {"code": str(self.code), "severity": str(self.severity), "message": self.message,
                "file": self.file, "line": self.line, "seq": self.seq, "checkpoint": self.checkpoint}


class Outcome(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    INCONCLUSIVE = "inconclusive"


@dataclass(frozen=True, slots=True)
class Report:
    source: str
    problems: tuple[Problem, ...]
    log: str | None
    records: int
    checkpoints: int
    segments: int
    signatures_valid: int
    macs_checked: int
    size: int
    root: str | None
    head: str | None
    head_n: int | None
    head_ts: str | None
    first_ts: str | None
    last_ts: str | None
    boots: int
    epochs: int
    kinds: Mapping[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def outcome(self) -> Outcome:
        severities = {p.severity for p in self.problems}
        if Severity.ERROR in severities:
            return Outcome.INVALID
        if Severity.INCONCLUSIVE in severities:
            return Outcome.INCONCLUSIVE
        return Outcome.VALID

    def codes(self) -> list[str]:
        return sorted({str(p.code) for p in self.problems})

    def to_json(self) -> dict[str, object]:
        return {
            "outcome": str(self.outcome), "source": self.source, "log": self.log, "records": self.records,
            "checkpoints": self.checkpoints, "segments": self.segments,
            "signatures_valid": self.signatures_valid, "macs_checked": self.macs_checked, "size": self.size,
            "root": self.root, "head": self.head, "head_n": self.head_n, "head_ts": self.head_ts,
            "first_ts": self.first_ts, "last_ts": self.last_ts, "boots": self.boots, "epochs": self.epochs,
            "kinds": dict(self.kinds), "seconds": round(self.seconds, 3),
            "problems": [p.to_json() for p in self.problems],
        }


Progress = Callable[[int, int, int], None]  # segments done, segments total, records so far


_Reason = Literal["invalid", "unknown", "unavailable", "no_key"]  # the module docstring's cases; no_key: none given


@dataclass(slots=True)
class _Unkeyed:
    """An epoch whose chain key the run does not have, and the records whose MACs therefore go unchecked."""

    reason: _Reason
    message: str
    provider: str | None = None
    file: str | None = None
    line: int | None = None
    seq: int | None = None  # of the epoch record; None before any epoch record
    anchored: bool = False  # the epoch record itself is covered by a checkpoint
    tail_first: int | None = None
    tail_last: int | None = None
    tail_count: int = 0


@dataclass(slots=True)
class _Segment:
    name: str
    first: int
    ref: SegmentRef | None  # None: not referenced by any checkpoint
    checkpoint: int | None


class Verifier:
    """One verification run over a `Source`. Use `verify(...)`; the class only holds the run's state."""

    def __init__(self, source: Source, keyring: KeyRing, unwrapper: Unwrapper, *,
                 trusted: bytes | None = None, max_age: float | None = None, now: float | None = None,
                 progress: Progress | None = None, strict: bool = False) -> None:
        self.source = source
        self.strict = strict
        self.keyring = keyring
        self.unwrapper = unwrapper
        self.trusted_bytes = trusted
        self.max_age = max_age
        self.now = time.time() if now is None else now
        self.progress = progress
        self.problems: list[Problem] = []
        self.checkpoints: dict[int, SignedCheckpoint] = {}
        self.cp_file: dict[int, str] = {}
        self.chain: list[Checkpoint] = []
        self.signatures_valid = 0
        self.macs_checked = 0
        self.records = 0
        self.first_ts: str | None = None
        self.last_ts: str | None = None
        self.boots = 0
        self.epochs = 0
        self.kinds: dict[str, int] = {}
        self.log_id: str | None = None
        self.tail_records: list[tuple[int, str, str, bool]] = []  # seq, kind, ts, boot of unanchored records
        self.unkeyed: list[_Unkeyed] = []  # epochs without a chain key, in log order
        self.opened_providers: set[str] = set()  # key sources that opened at least one epoch of this log
        self._last_epoch: tuple[object, object] | None = None  # (origin, provider) of the previous epoch record

    def add(self, code: Code, message: str, **where: object) -> None:
        self.problems.append(Problem(code, message, **where))  # type: ignore[arg-type]

    # --- driver ----------------------------------------------------------------------------------------

    def run(self) -> Report:
        started = time.monotonic()
        try:
            names = self.source.names()
            for note in self.source.notes():
                self.add(Code(note.code), note.message, file=note.name)
        except AuditError as exc:
            self.add(Code.STORE_UNREADABLE, str(exc))
            return self._report(started)
        if not len(self.keyring):
            self.add(Code.KEY_UNAVAILABLE, "no public key given: checkpoint signatures cannot be checked "
                                           "(use --public-key or --kms-key-id)")
        segment_names: list[str] = []
        checkpoint_names: list[str] = []
        for name in names:
            base = name.rsplit("/", 1)[-1]
            if base.startswith(TMP_PREFIX):
                self.add(Code.TEMP_FILE, "leftover temporary file from an interrupted write", file=name)
            elif name.startswith(CHECKPOINT_DIR + "/") and name.endswith(".json"):
                checkpoint_names.append(name)
            elif name.startswith(SEGMENT_DIR + "/") and name.endswith(".jsonl"):
                segment_names.append(name)
            else:
                self.add(Code.SEGMENT_UNREFERENCED, "file is not part of the log layout", file=name)
        if not checkpoint_names and not segment_names:
            self.add(Code.NOTHING_TO_VERIFY, f"no checkpoints and no segments in {self.source.describe()}")
            return self._report(started)
        self._load_checkpoints(checkpoint_names)
        self._check_chain()
        trusted = self._load_trusted()
        segments = self._plan_segments(segment_names)
        roots = self._records(segments, trusted)
        self._check_unkeyed()
        self._check_tail()
        self._check_trusted(trusted, roots)
        self._check_freshness()
        if not self.chain:
            self.add(Code.NOTHING_TO_VERIFY, "no checkpoint anchors any record")
        return self._report(started)

    def _report(self, started: float) -> Report:
        head = self.chain[-1] if self.chain else None
        order = {Severity.ERROR: 0, Severity.INCONCLUSIVE: 1, Severity.WARNING: 2, Severity.INFO: 3}
        problems = sorted(self.problems, key=lambda p: order[p.severity])
        return Report(
            source=self.source.describe(), problems=tuple(problems), log=self.log_id, records=self.records,
            checkpoints=len(self.checkpoints), segments=self._segment_count, signatures_valid=self.signatures_valid,
            macs_checked=self.macs_checked, size=head.size if head else 0,
            root=head.root.hex() if head else None, head=head.body_hash() if head else None,
            head_n=head.n if head else None, head_ts=head.ts if head else None, first_ts=self.first_ts,
            last_ts=self.last_ts, boots=self.boots, epochs=self.epochs, kinds=dict(self.kinds),
            seconds=time.monotonic() - started)

    _segment_count = 0

    # --- checkpoints -----------------------------------------------------------------------------------

    def _load_checkpoints(self, names: list[str]) -> None:
        for name in names:
            try:
                data = self.source.read(name)
                signed = parse_checkpoint(data, name)
            except CheckpointFormatError as exc:
                self.add(Code.CHECKPOINT_MALFORMED, str(exc), file=name)
                continue
            except AuditError as exc:
                self.add(Code.STORE_UNREADABLE, str(exc), file=name)
                continue
            cp = signed.checkpoint
            try:
                canonical = signed.to_bytes()
            except AuditError as exc:  # a value no writer produces, such as an integer beyond the safe range
                self.add(Code.CHECKPOINT_MALFORMED, f"holds a value the writer never writes: {exc}", file=name)
                continue
            if canonical != data:
                # The writer emits canonical bytes: any other form (even of the unsigned hint) was edited.
                self.add(Code.CHECKPOINT_MALFORMED, "file is not the canonical form the writer produces",
                         file=name, checkpoint=cp.n)
            if checkpoint_name(cp.n) != name:
                self.add(Code.CHECKPOINT_MISPLACED, f"file holds checkpoint {cp.n}, expected by its name "
                         f"to hold another", file=name, checkpoint=cp.n)
            verdict = self.keyring.verify(cp.key, cp.body_bytes(), signed.signature)
            if verdict is None and len(self.keyring):
                self.add(Code.KEY_UNKNOWN, f"signed by {cp.key}, which is not a trusted key "
                         f"({', '.join(self.keyring.fingerprints())})", file=name, checkpoint=cp.n)
            elif verdict is False:
                self.add(Code.SIG_INVALID, f"signature does not verify under {cp.key}", file=name,
                         checkpoint=cp.n)
            elif verdict:
                self.signatures_valid += 1
            other = self.checkpoints.get(cp.n)
            if other is not None:
                if other.checkpoint.body_hash() == cp.body_hash():
                    self.add(Code.CHECKPOINT_DUP, f"checkpoint {cp.n} appears twice (replayed copy; "
                             f"also in {self.cp_file[cp.n]})", file=name, checkpoint=cp.n)
                else:
                    self.add(Code.FORK, f"two different checkpoints claim index {cp.n} (the other is in "
                             f"{self.cp_file[cp.n]})", file=name, checkpoint=cp.n)
                if checkpoint_name(cp.n) != name:
                    continue  # keep the one stored under its own name
            self.checkpoints[cp.n] = signed
            self.cp_file[cp.n] = name

    def _check_chain(self) -> None:
        if not self.checkpoints:
            return
        prev: Checkpoint | None = None
        prev_hash: str | None = None
        logs = {s.checkpoint.log for s in self.checkpoints.values()}
        self.log_id = self.checkpoints[min(self.checkpoints)].checkpoint.log
        if len(logs) > 1:
            self.add(Code.FORK, f"checkpoints of {len(logs)} different logs are mixed: {sorted(logs)}")
        expected_n = 0
        for n in sorted(self.checkpoints):  # not range(top): a forged n of 10**12 must not hang us
            if n != expected_n:
                span = f"checkpoint {expected_n}" if n == expected_n + 1 else f"checkpoints {expected_n}..{n - 1}"
                self.add(Code.CHECKPOINT_MISSING, f"{span} missing from the chain",
                         file=checkpoint_name(expected_n), checkpoint=expected_n)
                prev, prev_hash = None, None
            expected_n = n + 1
            signed = self.checkpoints[n]
            cp = signed.checkpoint
            file = self.cp_file[n]
            body_hash = cp.body_hash()
            if n == 0:
                if cp.prev is not None or cp.prev_size != 0:
                    self.add(Code.CHAIN_BROKEN, "the first checkpoint points to a predecessor", file=file,
                             checkpoint=n)
            elif prev is not None:
                if cp.prev != prev_hash:
                    self.add(Code.CHAIN_BROKEN, f"prev is {cp.prev}, but checkpoint {n - 1} hashes to "
                             f"{prev_hash}", file=file, checkpoint=n)
                if cp.prev_size != prev.size:
                    self.add(Code.CHAIN_BROKEN, f"prev_size {cp.prev_size} differs from checkpoint {n - 1}'s "
                             f"size {prev.size}", file=file, checkpoint=n)
                elif cp.size <= prev.size:
                    self.add(Code.CHAIN_BROKEN, f"size {cp.size} does not grow past {prev.size}", file=file,
                             checkpoint=n)
                else:
                    try:
                        verify_consistency(prev.size, cp.size, cp.consistency, prev.root, cp.root)
                    except ProofError as exc:
                        self.add(Code.CONSISTENCY_FAIL, f"consistency proof from checkpoint {n - 1}: {exc}",
                                 file=file, checkpoint=n)
            expect = cp.prev_size
            for ref in cp.segments:
                if ref.first != expect or ref.last < ref.first:
                    self.add(Code.CHECKPOINT_INVALID, f"segment {ref.name} covers seq {ref.first}..{ref.last}, "
                             f"expected to start at {expect}", file=file, checkpoint=n)
                expect = ref.last + 1
            if expect != cp.size:
                self.add(Code.CHECKPOINT_INVALID, f"segments end at seq {expect - 1}, size is {cp.size}",
                         file=file, checkpoint=n)
            self.chain.append(cp)
            prev, prev_hash = cp, body_hash

    # --- segments and records --------------------------------------------------------------------------

    def _plan_segments(self, names: list[str]) -> list[_Segment]:
        referenced: dict[str, tuple[SegmentRef, int]] = {}
        for cp in self.chain:
            for ref in cp.segments:
                referenced[ref.name] = (ref, cp.n)
        present = set(names)
        plan: list[_Segment] = []
        for name, (ref, n) in referenced.items():
            if name not in present:
                self.add(Code.SEGMENT_MISSING, f"segment referenced by checkpoint {n} is missing", file=name,
                         seq=ref.first, checkpoint=n)
            plan.append(_Segment(name, ref.first, ref, n))
        head_size = self.chain[-1].size if self.chain else 0
        covered = sorted((ref.first, ref.last) for ref, _n in referenced.values())
        for name in names:
            if name in referenced:
                continue
            stem = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
            first = int(stem) if stem.isdigit() else -1
            if first >= head_size:
                plan.append(_Segment(name, first, None, None))  # tail candidate, continuity checked later
                continue
            at = bisect.bisect_right(covered, (first, float("inf"))) - 1
            if first < 0 or (at >= 0 and covered[at][0] <= first <= covered[at][1]):
                self.add(Code.SEGMENT_UNREFERENCED, "segment is not referenced by any checkpoint and "
                         "duplicates an anchored range", file=name)
            else:
                # Its checkpoint is missing (reported already); read it anyway so later roots stay checkable.
                self.add(Code.SEGMENT_UNREFERENCED, "segment inside the anchored range is not referenced by "
                         "any checkpoint", file=name)
                plan.append(_Segment(name, first, None, None))
        plan.sort(key=lambda s: (s.first, s.name))
        self._segment_count = len(plan)
        return plan

    def _records(self, plan: list[_Segment], trusted: Checkpoint | None) -> dict[int, bytes]:
        """Stream every record once: format, seq, MAC chain, leaf hashes; compare roots as sizes are reached."""
        targets: dict[int, list[Checkpoint]] = {}
        for cp in self.chain:
            targets.setdefault(cp.size, []).append(cp)
        wanted_sizes = set(targets)
        if trusted is not None:
            wanted_sizes.add(trusted.size)
        roots: dict[int, bytes] = {}
        tree = CompactRange()
        tree_ok = True
        expected = 0
        skipped: set[int] = set()
        prev_mac = GENESIS_MAC
        key: hmac.HMAC | None = None  # keyed once per epoch; copied per record (saves the key schedule)
        orphans = unkeyed = _Unkeyed("unavailable", "no epoch record precedes them")  # why `key` is None
        anomaly = False
        root_failures = 0
        sha256 = hashlib.sha256
        loads = json.loads
        parse = parse_line
        header_of = read_header
        strict = self.strict
        obj: dict[str, object] | None
        compare = hmac.compare_digest
        head_size = self.chain[-1].size if self.chain else 0
        boot_links: list[tuple[int, object, str, int]] = []
        for index, seg in enumerate(plan):
            if self.progress is not None:
                self.progress(index, len(plan), self.records)
            try:
                data = self.source.read(seg.name)
            except AuditError:
                if seg.ref is not None:
                    tree_ok = False  # already reported as SEGMENT_MISSING (or unreadable)
                continue
            if seg.ref is not None:
                actual = sha256(data).hexdigest()
                if actual != seg.ref.sha256 or len(data) != seg.ref.bytes:
                    self.add(Code.SEGMENT_MODIFIED, f"content hash {actual[:16]}.. ({len(data)} bytes) differs "
                             f"from checkpoint {seg.checkpoint}'s {seg.ref.sha256[:16]}.. ({seg.ref.bytes} "
                             f"bytes)", file=seg.name, checkpoint=seg.checkpoint)
            elif seg.first != expected:
                self.add(Code.SEGMENT_UNREFERENCED, f"unreferenced segment starts at seq {seg.first}, not where "
                         f"the log continues ({expected})", file=seg.name)
                continue
            lines = data.split(b"\n")
            torn = lines.pop()
            if torn:
                if seg.ref is None and index == len(plan) - 1:
                    self.add(Code.TORN_TAIL, f"last line is incomplete ({len(torn)} bytes); the writer cuts it "
                             "on restart", file=seg.name, line=len(lines) + 1)
                else:
                    self.add(Code.RECORD_MALFORMED, "segment does not end with a newline", file=seg.name,
                             line=len(lines) + 1)
            for lineno, line in enumerate(lines, 1):
                self.records += 1
                leaf = sha256(b"\x00" + line).digest()
                if tree_ok:
                    tree.append(leaf)
                    if tree.size in wanted_sizes:
                        root = tree.root()
                        roots[tree.size] = root
                        for cp in targets.get(tree.size, ()):
                            hint = self.checkpoints[cp.n].frontier
                            if hint and hint != tree.frontier and root == cp.root:
                                self.add(Code.CHECKPOINT_INVALID, "the unsigned frontier hint does not match "
                                         "the tree", file=self.cp_file.get(cp.n), checkpoint=cp.n)
                            if root != cp.root:
                                root_failures += 1
                                if root_failures == 1:
                                    self.add(Code.ROOT_MISMATCH, f"records 0..{cp.size - 1} hash to "
                                             f"{root.hex()[:16]}.., checkpoint says {cp.root.hex()[:16]}..",
                                             file=self.cp_file.get(cp.n), checkpoint=cp.n)
                try:
                    mac, record = parse(line)
                    # Fast path (audit.line.read_header): the header read without parsing the JSON; anything
                    # unusual (lifecycle records, strict mode) is fully parsed.
                    header = None if strict else header_of(line)
                    if header is None:
                        obj = loads(record)
                    else:
                        kind, seq, ts = header
                        obj = loads(record) if kind in _LIFECYCLE else None
                    if obj is not None:
                        o_seq, o_kind, o_ts = obj["seq"], obj["kind"], obj["ts"]
                        if not isinstance(o_seq, int) or not isinstance(o_kind, str) or not isinstance(o_ts, str):
                            raise RecordError("header fields have the wrong types")
                        seq, kind, ts = o_seq, o_kind, o_ts
                        if strict and encode(obj, checked=True) != record:
                            raise RecordError("record is not in canonical form")
                except (RecordError, ValueError, KeyError, TypeError, RecursionError) as exc:
                    # RecursionError: nesting deeper than the JSON parser's stack, which no writer produces.
                    self.add(Code.RECORD_MALFORMED, f"unreadable record: {type(exc).__name__}: {exc}"[:300],
                             file=seg.name, line=lineno)
                    anomaly = True
                    expected += 1
                    continue
                # sequence
                if seq == expected:
                    expected += 1
                elif seq > expected:
                    self.add(Code.RECORD_SEQ_GAP, f"seq jumps from {expected - 1} to {seq} "
                             f"({seq - expected} record(s) missing)", file=seg.name, line=lineno, seq=seq)
                    skipped.update(range(expected, min(seq, expected + 100_000)))
                    expected = seq + 1
                    anomaly = True
                elif seq in skipped:
                    skipped.discard(seq)
                    self.add(Code.RECORD_SEQ_ORDER, f"seq {seq} appears after seq {expected - 1}",
                             file=seg.name, line=lineno, seq=seq)
                    anomaly = True
                else:
                    self.add(Code.RECORD_SEQ_DUP, f"seq {seq} appears again", file=seg.name, line=lineno,
                             seq=seq)
                    anomaly = True
                self.kinds[kind] = self.kinds.get(kind, 0) + 1
                if self.first_ts is None:
                    self.first_ts = ts
                self.last_ts = ts
                if seq >= head_size:
                    self.tail_records.append((seq, kind, ts, obj is not None and obj.get("boot") is True))
                if kind == Kind.EPOCH_START and obj is not None:
                    raw_key = self._epoch_key(obj, seg.name, lineno, anchored=seq < head_size)
                    key = None if raw_key is None else hmac.new(raw_key, digestmod=hashlib.sha256)
                    if key is None:
                        unkeyed = self.unkeyed[-1]
                    params = obj.get("params")
                    interval = params.get("heartbeat_interval_ms") if isinstance(params, dict) else None
                    # Only what a writer writes (a canonical integer): 10**400 ms would overflow the float bound.
                    if isinstance(interval, int) and 0 <= interval <= MAX_SAFE_INT:
                        self._heartbeat_ms = interval
                    if obj.get("boot") is True:
                        self.boots += 1
                        boot_links.append((seq, obj.get("prev_checkpoint"), seg.name, lineno))
                # MAC chain
                if key is not None:
                    self.macs_checked += 1
                    step = key.copy()
                    step.update(prev_mac + record)
                    if not compare(step.digest(), mac):
                        if anomaly:
                            self.add(Code.CHAIN_BROKEN, "MAC chain does not continue here (after the "
                                     "sequence problem above)", file=seg.name, line=lineno, seq=seq)
                        else:
                            self.add(Code.RECORD_MAC_INVALID, "record MAC does not match its content and the "
                                     "previous MAC", file=seg.name, line=lineno, seq=seq)
                    anomaly = False
                elif seq >= head_size:
                    if unkeyed.tail_first is None:
                        unkeyed.tail_first = seq
                    unkeyed.tail_last = seq
                    unkeyed.tail_count += 1
                prev_mac = mac
        if root_failures > 1:
            self.add(Code.ROOT_MISMATCH, f"{root_failures - 1} later checkpoint root(s) also differ (they "
                     "include the records above)")
        if orphans.tail_count:  # a log that does not start with its epoch record: reported above already
            self.unkeyed.insert(0, orphans)
        if not tree_ok:
            missing = [cp.n for cp in self.chain if cp.size not in roots]
            if missing:
                self.add(Code.ROOT_MISMATCH, f"roots of checkpoints {missing[0]}..{missing[-1]} cannot be "
                         "recomputed because a segment is missing", checkpoint=missing[0])
        for cp in self.chain:
            if tree_ok and cp.size > tree.size:
                self.add(Code.SEGMENT_MISSING, f"checkpoint {cp.n} covers {cp.size} records, the log has "
                         f"{tree.size}", file=self.cp_file.get(cp.n), checkpoint=cp.n)
                break
        self._check_boot_links(boot_links)
        if self.progress is not None:
            self.progress(len(plan), len(plan), self.records)
        return roots

    def _epoch_key(self, obj: Mapping[str, object], file: str, line: int, *, anchored: bool) -> bytes | None:
        """K_epoch of an epoch record, or None with the reason appended to `self.unkeyed`."""
        self.epochs += 1
        seq = raw if isinstance(raw := obj.get("seq"), int) else None
        at: dict[str, object] = {"file": file, "line": line, "seq": seq}

        def unkeyed(reason: _Reason, message: str, provider: object = None) -> None:
            self.unkeyed.append(_Unkeyed(reason, message, provider if isinstance(provider, str) else None,
                                         file, line, seq, anchored))

        descriptor = obj.get("key")
        if not isinstance(descriptor, Mapping):
            self.add(Code.EPOCH_KEY_INVALID, "epoch record has no key descriptor", **at)
            unkeyed("invalid", "no key descriptor")
            return None
        provider = descriptor.get("provider")
        context = descriptor.get("context")
        if not isinstance(context, Mapping) or context.get("warden:origin") != obj.get("origin") or (
                self.log_id is not None and context.get("warden:log") != self.log_id):
            self.add(Code.EPOCH_KEY_INVALID, "the key's encryption context does not name this log and origin",
                     **at)
        last, self._last_epoch = self._last_epoch, (obj.get("origin"), provider)
        if obj.get("boot") is not True and last is not None and last[0] == obj.get("origin") and (
                last[1] != provider):
            # One AuditLog keeps one key provider: only a new boot can name another key source.
            self.add(Code.EPOCH_KEY_INVALID, f"the key source changes within a boot (from {last[1]!r} to "
                     f"{provider!r}); a writer keeps its key source until it restarts", **at)
            unkeyed("invalid", "the key source changes within a boot", provider)
            return None
        if self.unwrapper.empty:
            unkeyed("no_key", "no chain key given (--key-dir, --key-file or --kms-decrypt)", provider)
            return None
        try:
            key = self.unwrapper.unwrap(descriptor)
        except (RecordError, EpochKeyInvalidError) as exc:
            # RecordError: a float or a lone surrogate in it. Either way not a descriptor any writer wrote.
            self.add(Code.EPOCH_KEY_INVALID, f"the epoch key cannot be unwrapped from what the record holds: "
                     f"{exc}"[:300], **at)
            unkeyed("invalid", str(exc), provider)
            return None
        except EpochKeyUnknownError as exc:
            unkeyed("unknown", str(exc), provider)
            return None
        except KeyUnavailableError as exc:
            unkeyed("unavailable", str(exc), provider)
            return None
        if isinstance(provider, str):
            self.opened_providers.add(provider)
        return key

    def _check_boot_links(self, links: list[tuple[int, object, str, int]]) -> None:
        by_size = {cp.size: cp for cp in self.chain}
        for seq, link, file, line in links:
            if seq == 0:
                if link is not None:
                    self.add(Code.CHAIN_BROKEN, "the log's first boot links to a predecessor", file=file,
                             line=line, seq=seq)
                continue
            cp = by_size.get(seq)
            if not isinstance(link, Mapping):
                self.add(Code.CHAIN_BROKEN, "boot record does not link to the previous boot's checkpoint",
                         file=file, line=line, seq=seq)
            elif cp is None:
                if seq < (self.chain[-1].size if self.chain else 0):
                    self.add(Code.CHECKPOINT_MISSING, f"no checkpoint seals the previous boot at size {seq}",
                             file=file, line=line, seq=seq)
            elif link.get("hash") != cp.body_hash() or link.get("n") != cp.n:
                self.add(Code.CHAIN_BROKEN, f"boot links to checkpoint {link.get('n')} ({link.get('hash')}), "
                         f"but checkpoint {cp.n} seals the previous boot", file=file, line=line, seq=seq)

    # --- tail, trusted state, freshness ------------------------------------------------------------------

    def _check_unkeyed(self) -> None:
        """Judge the records whose MACs went unchecked (the rule is in the module docstring)."""
        no_key = [epoch for epoch in self.unkeyed if epoch.reason == "no_key" and epoch.tail_count]
        if no_key:  # one problem for the whole tail, not one per epoch
            first, last = no_key[0], no_key[-1]
            span = _span(sum(e.tail_count for e in no_key), first.tail_first, last.tail_last)
            self.add(Code.TAIL_KEY_UNAVAILABLE, f"{span} cannot be checked: {first.message}", seq=first.tail_first)
        for epoch in self.unkeyed:
            if epoch.reason in ("invalid", "no_key"):
                continue  # EPOCH_KEY_INVALID was reported where the record was read; no key given: above
            at: dict[str, object] = {"file": epoch.file, "line": epoch.line, "seq": epoch.seq}
            if not epoch.tail_count:
                self.add(Code.MAC_KEY_UNAVAILABLE, f"record MACs of this epoch not checked: {epoch.message}; "
                         "signed checkpoints cover its records", **at)
                continue
            span = _span(epoch.tail_count, epoch.tail_first, epoch.tail_last)
            if epoch.reason == "unknown" and not epoch.anchored and epoch.provider in self.opened_providers:
                self.add(Code.EPOCH_KEY_UNKNOWN, f"an unanchored epoch record names a chain key the "
                         f"{epoch.provider} key source does not hold, though it opens the log's other epochs: "
                         f"{epoch.message}; {span} cannot be checked (if the chain key really was rotated, "
                         "give the verifier the new key too)", **at)
            else:
                if epoch.seq is None:
                    at = {"seq": epoch.tail_first}
                self.add(Code.TAIL_KEY_UNAVAILABLE, f"{span} cannot be checked: {epoch.message}", **at)

    def _check_tail(self) -> None:
        head = self.chain[-1] if self.chain else None
        tail = self.tail_records
        if not tail:
            return
        first_ts = tail[0][2]
        unchecked = sum(epoch.tail_count for epoch in self.unkeyed)
        self.add(Code.UNANCHORED_TAIL, f"{len(tail)} record(s) after the newest checkpoint are not anchored "
                 f"yet (seq {tail[0][0]}..{tail[-1][0]}, from {first_ts}); "
                 + (f"the MACs of {unchecked} could not be checked" if unchecked else "their MACs were checked"),
                 seq=tail[0][0])
        for seq, kind, _ts, _boot in tail:
            if kind == Kind.SHUTDOWN:
                self.add(Code.CHECKPOINT_MISSING, "a shutdown record is not covered by a checkpoint: the writer "
                         "always checkpoints after it, so newer checkpoints were removed", seq=seq)
                break
        for seq, _kind, _ts, boot in tail[1:]:
            if boot:
                self.add(Code.CHECKPOINT_MISSING, "a boot record follows unanchored records: every boot anchors "
                         "what the previous one left first, so newer checkpoints were removed", seq=seq)
                break
        if head is not None:
            try:
                span = parse_ts(tail[-1][2]) - parse_ts(head.ts)
            except ValueError:
                return
            interval = self._heartbeat_bound()
            if interval is not None and span > interval:
                self.add(Code.CHECKPOINT_MISSING, f"unanchored records reach {span:.0f} s past the newest "
                         f"checkpoint, but the writer checkpoints at least every {interval:.0f} s: newer "
                         "checkpoints were removed (or signing failed for that long)", seq=tail[-1][0])

    _heartbeat_ms: int | None = None

    def _heartbeat_bound(self) -> float | None:
        return None if self._heartbeat_ms is None else 2 * self._heartbeat_ms / 1000 + 60

    def _load_trusted(self) -> Checkpoint | None:
        if self.trusted_bytes is None:
            return None
        try:
            signed = parse_checkpoint(self.trusted_bytes, "trusted state")
        except CheckpointFormatError as exc:
            self.add(Code.TRUSTED_STATE_INVALID, str(exc), file="trusted state")
            return None
        cp = signed.checkpoint
        verdict = self.keyring.verify(cp.key, cp.body_bytes(), signed.signature)
        if verdict is not True:
            self.add(Code.TRUSTED_STATE_INVALID, "the trusted checkpoint's signature does not verify under the "
                     "given keys", file="trusted state", checkpoint=cp.n)
            return None
        return cp

    def _check_trusted(self, trusted: Checkpoint | None, roots: Mapping[int, bytes]) -> None:
        if trusted is None:
            return
        if self.log_id is not None and trusted.log != self.log_id:
            self.add(Code.FORK, f"the trusted checkpoint belongs to log {trusted.log}, this is log {self.log_id}",
                     checkpoint=trusted.n)
            return
        mine = self.checkpoints.get(trusted.n)
        head = self.chain[-1] if self.chain else None
        if mine is not None and mine.checkpoint.body_hash() != trusted.body_hash():
            self.add(Code.FORK, f"checkpoint {trusted.n} differs from the trusted copy (size "
                     f"{mine.checkpoint.size} vs {trusted.size})", file=self.cp_file[trusted.n],
                     checkpoint=trusted.n)
            return
        root = roots.get(trusted.size)
        if root is not None and root != trusted.root:
            self.add(Code.FORK, f"the log's first {trusted.size} records hash to another root than the trusted "
                     "checkpoint's", checkpoint=trusted.n)
            return
        if head is None or head.n < trusted.n or head.size < trusted.size:
            self.add(Code.ROLLBACK, f"the log ends at checkpoint {head.n if head else None} (size "
                     f"{head.size if head else 0}), before the trusted checkpoint {trusted.n} (size "
                     f"{trusted.size})", checkpoint=trusted.n)

    def _check_freshness(self) -> None:
        if self.max_age is None or not self.chain:
            return
        head = self.chain[-1]
        try:
            age = self.now - parse_ts(head.ts)
        except ValueError:
            return
        if age > self.max_age:
            self.add(Code.STALE_TAIL, f"the newest checkpoint ({head.ts}) is {age:.0f} s old, more than the "
                     f"allowed {self.max_age:.0f} s", file=self.cp_file.get(head.n), checkpoint=head.n)
        tail = [r for r in self.tail_records if r[0] >= head.size]
        if tail:
            try:
                oldest = self.now - parse_ts(tail[0][2])
            except ValueError:
                return
            if oldest > self.max_age:
                self.add(Code.STALE_TAIL, f"record {tail[0][0]} has waited {oldest:.0f} s for a checkpoint, "
                         f"more than the allowed {self.max_age:.0f} s", seq=tail[0][0])


def _span(count: int, first: int | None, last: int | None) -> str:
    return f"{count} unanchored record(s) (seq {first}..{last}), which only their MACs attest,"


def verify(source: Source, keyring: KeyRing, unwrapper: Unwrapper | None = None, *,
           trusted: bytes | None = None, max_age: float | None = None, now: float | None = None,
           progress: Progress | None = None, strict: bool = False) -> Report:
    """Verify a log. `trusted` is the bytes of a checkpoint file kept from an earlier run; `strict` also
    parses every record and checks it is canonical JSON (slower; MACs and roots already cover the bytes)."""
    return Verifier(source, keyring, unwrapper or Unwrapper([]), trusted=trusted, max_age=max_age, now=now,
                    progress=progress, strict=strict).run()
