"""`warden audit verify|prove|show`: the auditor's command line. Only this module maps outcomes to exit codes.

Exit codes: 0 valid, 1 integrity failure, 2 inconclusive (nothing to verify, key unavailable), 64 usage.

`verify` takes one log or a fleet. A TARGET that is itself a log (it has `segments/` or `checkpoints/`) is
verified alone, as always; a TARGET that holds logs below it (a directory or an S3 prefix, `audit.fleet`
defines what a log is there) is verified as a fleet, logs in parallel, with per-log results and one
summary. `--fleet` asks for the fleet form even when TARGET is one log. A fleet exits 1 if any log is invalid
or stale (its newest checkpoint older than `--max-age`, as STALE_TAIL fails one log), else 2 if any log is
inconclusive or none was found, else 0.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from audit.checkpoint import CHECKPOINT_DIR, SEGMENT_DIR, parse_checkpoint
from audit.errors import AuditError, ConfigError, ProofError
from audit.fleet import (
    Discovery,
    FleetReport,
    LogResult,
    Status,
    Trust,
    discover_directory,
    discover_s3,
    verify_fleet,
)
from audit.keys import LocalKeyProvider
from audit.line import parse_line
from audit.merkle import inclusion_proof, leaf_hash, list_range_hash, verify_inclusion
from audit.signers import PUBLIC_KEY_FILE, KeyRing
from audit.stores import DirectorySource, S3Source, Source, parse_s3_url
from audit.verify import Outcome, Report, Severity, verify

EXIT_VALID = 0
EXIT_INVALID = 1
EXIT_INCONCLUSIVE = 2
EXIT_USAGE = 64

_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?")
_UNITS = {None: 1.0, "ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")


def parse_duration(text: str) -> float:
    """'90s', '10m', '1h', '2d', '250ms' or plain seconds."""
    match = _DURATION.fullmatch(text.strip())
    if not match:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (use e.g. 90s, 10m, 1h)")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="warden audit", description="Verify, prove and show the tamper-evident audit log.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("target", help="log directory or s3://bucket/prefix")
        p.add_argument("--public-key", action="append", default=[], metavar="PEM",
                       help="trusted checkpoint signing key (PEM or DER); repeat for rotated keys")
        p.add_argument("--kms-key-id", action="append", default=[], metavar="ID",
                       help="trust this AWS KMS signing key (fetched with GetPublicKey)")
        p.add_argument("--key-dir", type=Path, metavar="DIR",
                       help=f"use {PUBLIC_KEY_FILE} (and chain.key, if readable) from this key directory")
        p.add_argument("--endpoint-url", help="S3/KMS endpoint (e.g. a local test server)")
        p.add_argument("--region", help="AWS region for S3/KMS")
        p.add_argument("--json", action="store_true", help="machine-readable output")

    v = sub.add_parser("verify", help="check every record, MAC, root, signature, proof and file")
    common(v)
    v.add_argument("--key-file", action="append", default=[], type=Path, metavar="FILE",
                   help="local chain master key (chain.key), to check record MACs (those after the newest "
                        "checkpoint need it); repeat for rotated keys")
    v.add_argument("--kms-decrypt", action="store_true",
                   help="unwrap AWS KMS epoch keys with kms:Decrypt to check record MACs")
    v.add_argument("--trusted-state", type=Path, metavar="FILE",
                   help="a checkpoint file kept from an earlier run: the log must contain it (else ROLLBACK/FORK)")
    v.add_argument("--save-state", type=Path, metavar="FILE",
                   help="after a valid run, write the newest checkpoint here for the next --trusted-state")
    v.add_argument("--max-age", type=parse_duration, metavar="DURATION",
                   help="fail with STALE_TAIL when the newest checkpoint is older (e.g. 5m); in a fleet such a "
                        "log is STALE (exit 1) unless it ended with a clean shutdown")
    v.add_argument("--fleet", action="store_true",
                   help="TARGET holds many logs: verify each one found below it, even if TARGET is a log")
    v.add_argument("-j", "--jobs", type=int, metavar="N",
                   help="fleet: verify N logs at a time, in worker processes (default: the usable CPUs)")

    p = sub.add_parser("prove", help="print an inclusion proof for one record against the newest checkpoint")
    common(p)
    p.add_argument("--seq", type=int, required=True, help="record sequence number")

    s = sub.add_parser("show", help="print records (the stored lines)")
    s.add_argument("target", help="log directory or s3://bucket/prefix")
    s.add_argument("--from", dest="start", type=int, default=0, metavar="SEQ")
    s.add_argument("--to", dest="end", type=int, default=None, metavar="SEQ")
    s.add_argument("--kind", action="append", default=[])
    s.add_argument("--endpoint-url")
    s.add_argument("--region")
    return parser


def _source(args: argparse.Namespace) -> Source:
    target: str = args.target
    if target.startswith("s3://"):
        bucket, prefix = parse_s3_url(target)
        return S3Source(bucket, prefix, endpoint_url=args.endpoint_url, region=args.region)
    path = Path(target)
    if not path.is_dir():
        raise UsageError(f"warden audit: no such log directory: {target}")
    return DirectorySource(path)




class _ProgressBar:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int, records: int) -> None:
        now = time.monotonic()
        if total < 20 or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        width = 30
        filled = width * done // max(total, 1)
        self.stream.write(f"\rverifying [{'#' * filled}{'.' * (width - filled)}] {done}/{total} segments, "
                          f"{records:,} records")
        self.stream.flush()
        self.shown = True
        if done >= total:
            self.stream.write("\n")


def _print_report(report: Report, notes: list[str], out: TextIO) -> None:
    w = out.write
    w(f"Verifying audit log {report.source}\n")
    if report.log:
        w(f"  log {report.log}: {report.boots} boot(s), {report.epochs} epoch(s)\n")
    w("Results:\n")
    if report.head_n is not None:
        w(f"  {report.checkpoints} checkpoint(s), {report.signatures_valid} with a valid trusted signature; "
          f"newest #{report.head_n} at {report.head_ts}\n")
        w(f"  tree size {report.size}, root {report.root}\n")
    else:
        w("  no checkpoints\n")
    w(f"  {report.segments} segment(s), {report.records} record(s)")
    if report.first_ts:
        w(f" from {report.first_ts} to {report.last_ts}")
    w(f"; {report.macs_checked} record MAC(s) checked\n")
    for note in notes:
        w(f"  note: {note}\n")
    if report.problems:
        w("Problems:\n")
        for p in report.problems:
            where = p.where()
            w(f"  {p.severity.upper():<12} {p.code:<22} {where + ': ' if where else ''}{p.message}\n")
    outcome = report.outcome
    errors = sum(1 for p in report.problems if p.severity == Severity.ERROR)
    if outcome == Outcome.VALID:
        w(f"Result: VALID ({report.records} records, {report.seconds:.2f} s)\n")
    elif outcome == Outcome.INVALID:
        w(f"Result: INVALID ({errors} integrity problem(s))\n")
    else:
        w("Result: INCONCLUSIVE (the log could not be fully verified)\n")


def _cmd_verify(args: argparse.Namespace) -> int:
    if args.jobs is not None and args.jobs < 1:
        raise UsageError("warden audit verify: --jobs must be at least 1")
    discovery = _fleet(args)
    if discovery is not None:
        return _cmd_verify_fleet(args, discovery)
    source = _source(args)
    trust, ring, notes = _trust(args)
    unwrapper = trust.unwrapper()
    trusted = None
    if args.trusted_state is not None:
        try:
            trusted = args.trusted_state.read_bytes()
        except OSError as exc:
            raise UsageError(f"warden audit: cannot read trusted state: {exc}") from exc
    progress = _ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    report = verify(source, ring, unwrapper, trusted=trusted, max_age=args.max_age, progress=progress)
    if args.json:
        out = report.to_json()
        out["notes"] = notes
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        _print_report(report, notes, sys.stdout)
    if report.outcome == Outcome.VALID and args.save_state is not None and report.head_n is not None:
        name = f"{CHECKPOINT_DIR}/{report.head_n:012d}.json"
        args.save_state.write_bytes(source.read(name))
    return {Outcome.VALID: EXIT_VALID, Outcome.INVALID: EXIT_INVALID,
            Outcome.INCONCLUSIVE: EXIT_INCONCLUSIVE}[report.outcome]


def _fleet(args: argparse.Namespace) -> Discovery | None:
    """The logs below TARGET, or None when TARGET is to be verified as one log (it is one, or holds none)."""
    target: str = args.target
    if target.startswith("s3://"):
        try:
            discovery = discover_s3(target, endpoint_url=args.endpoint_url, region=args.region)
        except AuditError:
            if args.fleet:
                raise
            return None  # the one-log path reports the store's failure as it always has (STORE_UNREADABLE)
    else:
        path = Path(target)
        if not path.is_dir():
            raise UsageError(f"warden audit: no such log directory: {target}")
        discovery = discover_directory(path)
    if not args.fleet and (discovery.target_is_log or not discovery.logs):
        return None
    if args.trusted_state is not None or args.save_state is not None:
        raise UsageError("warden audit verify: --trusted-state and --save-state take one log's checkpoint; "
                         "verify each log on its own to use them")
    return discovery


def _trust(args: argparse.Namespace) -> tuple[Trust, KeyRing, list[str]]:
    """The keys the flags name, checked here (a file that cannot be used is a usage error naming it): as values
    each fleet worker process can rebuild (`Trust`), and the ring built from them in this process."""
    files = [Path(p) for p in args.public_key]
    # `prove` reads signatures only: it has no chain-key flags.
    key_files = [str(p) for p in getattr(args, "key_file", ())]
    kms_decrypt = bool(getattr(args, "kms_decrypt", False))
    if args.key_dir is not None:
        files.append(args.key_dir / PUBLIC_KEY_FILE)
        if hasattr(args, "key_file") and (args.key_dir / "chain.key").is_file():
            key_files.append(str(args.key_dir / "chain.key"))
    public: list[bytes] = []
    for file in files:
        try:
            data = file.read_bytes()
            KeyRing().add_bytes(data)
        except (OSError, ConfigError) as exc:
            raise UsageError(f"warden audit: cannot use public key {file}: {exc}") from exc
        public.append(data)
    for key_file in key_files:
        try:
            LocalKeyProvider.from_file(Path(key_file))
        except AuditError as exc:
            raise UsageError(f"warden audit: cannot use key file {key_file}: {exc}") from exc
    trust = Trust(tuple(public), tuple(args.kms_key_id), tuple(key_files), kms_decrypt, args.endpoint_url,
                  args.region)
    ring, notes = trust.keyring()
    return trust, ring, notes


def _fleet_progress(stream: TextIO) -> Callable[[int, int], None]:
    def show(done: int, total: int) -> None:
        stream.write(f"\rverified {done}/{total} logs")
        if done >= total:
            stream.write("\n")
        stream.flush()
    return show


_SHOWN_PROBLEMS = 10  # per log in the text report; --json has them all


def _log_line(result: LogResult, max_age: float | None) -> str:
    report = result.report
    if report is None:
        return f"verifier failed: {result.error}"
    parts = [f"{report.records:,} records, {report.checkpoints} checkpoint(s), {report.signatures_valid} "
             "with a valid trusted signature"]
    if report.head_ts is not None:
        age = "" if result.head_age is None else f", {result.head_age:,.0f} s ago"
        parts.append(f"newest #{report.head_n} at {report.head_ts}{age}")
    if result.closed:
        parts.append("closed (shutdown checkpoint)")
    if result.status == Status.STALE and max_age is not None:
        parts.append(f"stale: more than {max_age:,.0f} s without a checkpoint")
    return "; ".join(parts)


def _print_fleet(fleet: FleetReport, notes: list[str], max_age: float | None, out: TextIO) -> None:
    w = out.write
    how = "one at a time" if fleet.executor == "serial" else f"{fleet.jobs} at a time, {fleet.executor}es"
    w(f"Verifying {len(fleet.results)} audit log(s) under {fleet.target} ({how})\n")
    for note in notes:
        w(f"  note: {note}\n")
    width = max((len(r.ref.name) for r in fleet.results), default=0)
    for result in fleet.results:
        w(f"  {result.status.upper():<13}{result.ref.name:<{width}}  {_log_line(result, max_age)}\n")
        problems = result.report.problems if result.report is not None else ()
        for p in problems[:_SHOWN_PROBLEMS]:
            where = p.where()
            w(f"      {p.severity.upper():<12} {p.code:<22} {where + ': ' if where else ''}{p.message}\n")
        if len(problems) > _SHOWN_PROBLEMS:
            w(f"      ... and {len(problems) - _SHOWN_PROBLEMS} more problem(s) (--json lists them all)\n")
    if fleet.stray:
        w(f"  WARNING: {len(fleet.stray)} object(s) under the target belong to no log, not verified:\n")
        for name in fleet.stray[:_SHOWN_PROBLEMS]:
            w(f"      {name}\n")
    for entry in fleet.unreadable:
        w(f"  INCONCLUSIVE directory not listed, a log may be there: {entry}\n")
    n = fleet.summary()
    w(f"Summary: {n['logs']} log(s): {n['valid']} valid, {n['invalid']} invalid, {n['stale']} stale, "
      f"{n['inconclusive']} inconclusive ({n['closed']} closed); {n['records']:,} records in "
      f"{fleet.seconds:.2f} s\n")
    if not fleet.results or fleet.unreadable:
        w(f"Result: {fleet.status.upper()} ({'no log found' if not fleet.results else 'not every directory listed'})\n")
    else:
        w(f"Result: {fleet.status.upper()}\n")


def _cmd_verify_fleet(args: argparse.Namespace, discovery: Discovery) -> int:
    trust, _ring, notes = _trust(args)
    progress = _fleet_progress(sys.stderr) if sys.stderr.isatty() else None
    fleet = verify_fleet(discovery, trust, max_age=args.max_age, jobs=args.jobs, progress=progress)
    if args.json:
        out = fleet.to_json()
        out["notes"] = notes
        print(json.dumps(out, indent=2, sort_keys=True))
    else:
        _print_fleet(fleet, notes, args.max_age, sys.stdout)
    return {Status.VALID: EXIT_VALID, Status.INVALID: EXIT_INVALID, Status.STALE: EXIT_INVALID,
            Status.INCONCLUSIVE: EXIT_INCONCLUSIVE}[fleet.status]


def _segments(source: Source) -> list[tuple[int, str]]:
    out = []
    for name in source.names():
        stem = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
        if name.startswith(SEGMENT_DIR + "/") and name.endswith(".jsonl") and stem.isdigit():
            out.append((int(stem), name))
    return sorted(out)


def _cmd_prove(args: argparse.Namespace) -> int:
    source = _source(args)
    _trust_values, ring, _notes = _trust(args)
    heads = sorted(n for n in source.names() if n.startswith(CHECKPOINT_DIR + "/") and n.endswith(".json"))
    if not heads:
        print("warden audit prove: no checkpoints", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    signed = parse_checkpoint(source.read(heads[-1]), heads[-1])
    cp = signed.checkpoint
    verdict = ring.verify(cp.key, cp.body_bytes(), signed.signature) if len(ring) else None
    if verdict is False:
        print(f"warden audit prove: {heads[-1]}: signature does not verify", file=sys.stderr)
        return EXIT_INVALID
    if not 0 <= args.seq < cp.size:
        print(f"warden audit prove: seq {args.seq} is not anchored by the newest checkpoint (size {cp.size})",
              file=sys.stderr)
        return EXIT_INCONCLUSIVE
    leaves: list[bytes] = []
    record = b""
    for _first, name in _segments(source):
        for line in source.read(name).split(b"\n")[:-1]:
            if len(leaves) == args.seq:
                record = line
            leaves.append(leaf_hash(line))
            if len(leaves) == cp.size:
                break
        if len(leaves) == cp.size:
            break
    if len(leaves) < cp.size:
        print("warden audit prove: the segments hold fewer records than the checkpoint", file=sys.stderr)
        return EXIT_INVALID
    proof = inclusion_proof(args.seq, cp.size, list_range_hash(leaves))
    try:
        verify_inclusion(args.seq, cp.size, leaves[args.seq], proof, cp.root)
    except ProofError as exc:
        print(f"warden audit prove: the log does not match its checkpoint: {exc}", file=sys.stderr)
        return EXIT_INVALID
    out = {
        "seq": args.seq, "record": record.decode("utf-8"), "leaf_hash": leaves[args.seq].hex(),
        "tree_size": cp.size, "root": cp.root.hex(), "proof": [h.hex() for h in proof],
        "checkpoint": {"file": heads[-1], "n": cp.n, "hash": cp.body_hash(), "ts": cp.ts, "key": cp.key,
                       "signature_verified": verdict is True},
    }
    print(json.dumps(out, indent=2, sort_keys=True, ensure_ascii=False))
    return EXIT_VALID if verdict is True else EXIT_INCONCLUSIVE


def _cmd_show(args: argparse.Namespace) -> int:
    source = _source(args)
    kinds = set(args.kind)
    out = sys.stdout
    for first, name in _segments(source):
        if args.end is not None and first > args.end:
            break
        for line in source.read(name).split(b"\n")[:-1]:
            try:
                obj = json.loads(parse_line(line)[1])
            except (AuditError, ValueError, RecursionError):
                obj = None
            seq = obj.get("seq") if isinstance(obj, dict) else None
            if not isinstance(seq, int):  # also a `"seq": "7"` that only a tampered line holds
                print(f"warden audit show: {name}: unreadable line skipped", file=sys.stderr)
                continue
            if seq < args.start or (args.end is not None and seq > args.end):
                continue
            if kinds and obj.get("kind") not in kinds:
                continue
            out.write(line.decode("utf-8") + "\n")
    return EXIT_VALID


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            args = _parser().parse_args(args_list)
        except SystemExit as exc:  # --help
            return EXIT_VALID if exc.code in (0, None) else EXIT_USAGE
        command = {"verify": _cmd_verify, "prove": _cmd_prove, "show": _cmd_show}[args.command]
        return command(args)
    except UsageError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except ConfigError as exc:
        print(f"warden audit: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except AuditError as exc:
        print(f"warden audit: {exc}", file=sys.stderr)
        return EXIT_INCONCLUSIVE
    except BrokenPipeError:
        return EXIT_VALID
