"""Fuzzing the audit line format (audit/line.py, audit/records.py, audit/canonical.py) and the parsers that read
it back: the verifier's record and checkpoint reading (audit/verify.py, audit/checkpoint.py), crash recovery's
line reader (audit/line.py `read_seq`) and `warden audit show` (audit/cli.py).

Generated records round-trip through the canonical line form; any bytes in place of a line or a checkpoint
give a report with problem codes (or the module's own AuditError), never a traceback. Budget: tests/fuzz.py.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from audit import cli
from audit.canonical import MAX_SAFE_INT, encode, format_ts, is_canonical, parse_ts
from audit.checkpoint import CheckpointFormatError, parse_checkpoint
from audit.errors import AuditError, RecordError, StoreError
from audit.keys import LocalKeyProvider, Unwrapper
from audit.line import HEADER as _HEADER
from audit.line import read_seq as _line_seq
from audit.records import RESERVED_KEYS, check_body, check_kind, encode_record, make_line, split_line
from audit.signers import KeyRing
from audit.stores import SourceNote
from audit.verify import Outcome, Report, verify
from tests.audit.conftest import Built, build
from tests.fuzz import fuzz

# --- generated records round-trip --------------------------------------------------------------------------

SAFE_INTS = st.integers(-MAX_SAFE_INT, MAX_SAFE_INT)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)  # no lone surrogates: UTF-8 can hold it
VALUES = st.recursive(st.one_of(st.none(), st.booleans(), SAFE_INTS, TEXT), lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)), max_leaves=12)
BODY_KEYS = st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True).filter(lambda k: k not in RESERVED_KEYS)
BODIES = st.dictionaries(st.one_of(BODY_KEYS, st.sampled_from(["kind2", "origin_x", "seq_no", "ts0", "a", "z"])),
                         VALUES, max_size=6)
KINDS = st.one_of(st.sampled_from(["exchange", "epoch_start", "heartbeat", "shutdown"]),
                  st.from_regex(r"[a-z][a-z0-9_.]{0,20}", fullmatch=True))
TIMES = st.integers(0, 253402300799_999).map(lambda ms: format_ts(ms / 1000))


@fuzz(100)
@given(BODIES, st.integers(0, MAX_SAFE_INT), TIMES, TEXT, KINDS, st.binary(min_size=32, max_size=32))
@example({"nested": {"kind": "x", "origin": "o", "seq": 1, "ts": "2026-12-03T00:00:00.000Z"}}, 7,
         "2026-12-03T00:00:00.000Z", "c/ns/pod/boot", "exchange", bytes(32))  # a header look-alike inside
def test_a_record_round_trips_through_its_line(body: dict[str, Any], seq: int, ts: str, origin: str, kind: str,
                                               mac: bytes) -> None:
    check_body(body)
    check_kind(kind)
    record = encode_record(seq, ts, origin, kind, body)
    line = make_line(mac, record)
    assert b"\n" not in line  # one record, one line, whatever its strings hold
    assert split_line(line) == (mac, record)
    parsed = json.loads(record)
    assert parsed == {**body, "seq": seq, "ts": ts, "origin": origin, "kind": kind}
    assert encode(parsed) == record and is_canonical(record)
    assert parse_ts(ts) == pytest.approx(parse_ts(parsed["ts"]))
    # The verifier's fast path reads the header without parsing: it must read the same header, or none.
    header = _HEADER.search(line) if line.count(b'"seq":') == 1 else None
    if header is not None:
        assert (header.group(1).decode(), int(header.group(2)), header.group(3).decode()) == (kind, seq, ts)


# --- any bytes where a line is read -------------------------------------------------------------------------

JSON_ANY = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=10)
HEADER_VALUES = st.one_of(JSON_ANY, SAFE_INTS, st.integers(0, 40), TIMES, TEXT)
DESCRIPTOR = st.fixed_dictionaries({}, optional={
    "provider": st.one_of(st.just("local"), JSON_ANY), "key_id": JSON_ANY,
    "wrapped": st.one_of(st.just("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"), st.text(max_size=8), JSON_ANY),
    "context": st.one_of(st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2), JSON_ANY),
})
RECORD_OBJECTS = st.fixed_dictionaries(
    {"kind": st.one_of(st.sampled_from(["exchange", "epoch_start", "heartbeat", "shutdown"]), JSON_ANY),
     "seq": HEADER_VALUES, "ts": HEADER_VALUES, "origin": st.one_of(st.just("test/ns/pod-0/x"), JSON_ANY)},
    optional={"key": st.one_of(DESCRIPTOR, JSON_ANY), "boot": JSON_ANY, "prev_checkpoint": JSON_ANY,
              "params": st.one_of(st.fixed_dictionaries({"heartbeat_interval_ms": st.integers()}), JSON_ANY),
              "exchange": JSON_ANY})
MAC_PREFIX = b'{"_mac":"' + b"ab" * 32 + b'",'


@st.composite
def record_like_lines(draw: st.DrawFn) -> bytes:
    """A record MAC prefix and a JSON object whose header fields may hold anything."""
    obj = draw(RECORD_OBJECTS)
    text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=draw(st.booleans()))
    return MAC_PREFIX + text[1:].encode("utf-8", "surrogatepass")


LINES = st.one_of(st.binary(max_size=120).map(lambda b: b.replace(b"\n", b"")), record_like_lines(),
                  record_like_lines())
DEEP = MAC_PREFIX + b'"a":' + b"[" * 50_000 + b"]" * 50_000 + b',"kind":"exchange","origin":"o","seq":0}'


@fuzz(150)
@given(LINES)
@example(DEEP)
@example(MAC_PREFIX + b'"kind":"exchange","origin":"o","seq":"7","ts":"x"}')
def test_recovery_and_split_read_any_line(line: bytes) -> None:
    seq = _line_seq(line)
    assert seq is None or (isinstance(seq, int) and not isinstance(seq, bool))
    with contextlib.suppress(RecordError):
        split_line(line)


class MemorySource:
    """The files of a log, in memory (a fuzz example changes a copy)."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def names(self) -> list[str]:
        return sorted(self.files)

    def read(self, name: str) -> bytes:
        if name not in self.files:
            raise StoreError("no such file", where=name)
        return self.files[name]

    def notes(self) -> list[SourceNote]:
        return []

    def describe(self) -> str:
        return "memory"


@pytest.fixture(scope="module", params=["closed", "crashed"])
def template(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A closed log, and one whose writer died with an unanchored tail (the verifier's tail checks run)."""
    return build(tmp_path_factory.mktemp(request.param), boots=2, checkpoints_per_boot=2, records=2,
                 close_last=request.param == "closed")


def files_of(built: Built) -> dict[str, bytes]:
    return {p.relative_to(built.directory).as_posix(): p.read_bytes()
            for p in built.directory.rglob("*") if p.is_file()}


def run(built: Built, files: dict[str, bytes], *, mac_key: bool) -> Report:
    ring = KeyRing()
    ring.add_bytes(built.public_key.read_bytes())
    unwrapper = Unwrapper([LocalKeyProvider.from_file(built.chain_key)] if mac_key else [])
    report = verify(MemorySource(files), ring, unwrapper, max_age=3600.0)
    json.dumps(report.to_json())  # what `warden audit verify --json` prints
    return report


def epoch_start(**fields: object) -> bytes:
    """An epoch record whose fields the writer never writes (the MAC prefix is real in form only)."""
    obj = {"kind": "epoch_start", "origin": "test/ns/pod-0/boot1", "seq": 10, "ts": "2026-12-03T00:00:00.000Z",
           "boot": False, **fields}
    return MAC_PREFIX + json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()[1:]


DESCRIPTOR_OK = {"provider": "local", "key_id": "k", "wrapped": "AAAA", "context": {"warden:origin": "o"}}


@fuzz(100)
@given(st.data(), LINES, st.sampled_from(["replace", "insert", "append", "torn"]), st.booleans())
@example(None, DEEP, "replace", True)  # nesting past the JSON parser's recursion
@example(None, epoch_start(key={**DESCRIPTOR_OK, "x": 1.5}), "append", True)  # a float: no canonical form
@example(None, epoch_start(key={**DESCRIPTOR_OK, "context": {"a": "\ud800"}}), "append", True)  # lone surrogate
@example(None, epoch_start(key=DESCRIPTOR_OK, params={"heartbeat_interval_ms": 10**400}), "append", True)
def test_any_line_anywhere_is_reported_never_raised(template: Built, data: st.DataObject | None, line: bytes,
                                                    how: str, mac_key: bool) -> None:
    files = files_of(template)
    segments = sorted(n for n in files if n.startswith("segments/"))
    name = segments[-1] if data is None else data.draw(st.sampled_from(segments))
    lines = files[name].split(b"\n")[:-1]
    at = len(lines) - 1 if data is None else data.draw(st.integers(0, len(lines) - 1))
    if how == "replace":
        assume(lines[at] != line)
        lines[at] = line
        files[name] = b"".join(x + b"\n" for x in lines)
    elif how == "insert":
        lines.insert(at, line)
        files[name] = b"".join(x + b"\n" for x in lines)
    elif how == "append":
        files[name] += line + b"\n"
    else:
        assume(line)
        files[name] += line  # a torn write: no newline
    report = run(template, files, mac_key=mac_key)
    if how != "torn":
        assert report.outcome == Outcome.INVALID, report.problems


@fuzz(80)
@given(st.data(), st.one_of(st.binary(max_size=200), JSON_ANY.map(lambda v: json.dumps(v).encode())))
@example(None, b'{"body": ' + b"[" * 50_000 + b"]" * 50_000 + b"}")
def test_any_bytes_as_a_checkpoint_are_reported_never_raised(template: Built, data: st.DataObject | None,
                                                             content: bytes) -> None:
    files = files_of(template)
    names = sorted(n for n in files if n.startswith("checkpoints/"))
    name = names[-1] if data is None else data.draw(st.sampled_from(names))
    assume(files[name] != content)
    files[name] = content
    assert run(template, files, mac_key=True).outcome == Outcome.INVALID
    with contextlib.suppress(CheckpointFormatError):
        parse_checkpoint(content, name)


@fuzz(40)
@given(st.lists(LINES, min_size=1, max_size=4))
@example([MAC_PREFIX + b'"kind":"exchange","origin":"o","seq":"7","ts":"x"}'])  # seq < start raised TypeError
@example([DEEP])
def test_show_skips_any_line_it_cannot_read(tmp_path_factory: pytest.TempPathFactory, lines: list[bytes]) -> None:
    directory = tmp_path_factory.mktemp("show")
    (directory / "segments").mkdir()
    (directory / "segments" / "00000000000000000000.jsonl").write_bytes(b"".join(x + b"\n" for x in lines))
    try:
        code = cli.main(["show", str(directory), "--from", "0"])
    except UnicodeDecodeError:
        pytest.fail("show wrote a line that is not UTF-8")
    assert code in (cli.EXIT_VALID, cli.EXIT_INCONCLUSIVE)


def test_audit_errors_are_the_only_escape_of_the_parsers() -> None:
    """The documented error types: RecordError (a line), CheckpointFormatError (a checkpoint), both AuditError."""
    assert issubclass(RecordError, AuditError) and issubclass(CheckpointFormatError, AuditError)
    with pytest.raises(RecordError):
        split_line(b"not a record")
    with pytest.raises(CheckpointFormatError):
        parse_checkpoint(b"[]", "checkpoints/000000000000.json")


def test_the_templates_verify_unchanged(template: Built) -> None:
    """The fuzz tests' INVALID verdicts come from the changes they make, not from the in-memory source."""
    assert run(template, files_of(template), mac_key=True).outcome == Outcome.VALID
