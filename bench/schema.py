"""Output JSON-Schema validation cost (issue 21): the whole answer, the stream checker, early rejection.

    .venv/bin/python -m bench.schema [--runs 3000] [--stream-runs 300] [--delta 4]

(a) Whole answers: a ~2 KB answer (indented, as models write it) against a 20-property schema (nested object,
    array of objects, enums, bounds, `additionalProperties: false`): parse_document + CompiledSchema.violations,
    what the proxy runs on a non-streamed answer, p50/p99 of the thread CPU time per answer. The pure-Python
    `jsonschema` (Draft202012Validator.is_valid after json.loads) runs alongside when it is importable.
    Targets (printed, not asserted): p50 <= 50 us, p99 <= 200 us.
(b) Streams: the same answer fed to rules.schema.incremental.StreamChecker in `--delta`-character pieces, then
    end(): median cost per character over the runs (feed + end, so the full validation at the end is in it),
    also at 1-character pieces and in one piece. Target: <= 2 us per character at 4-character pieces. Then
    dense arrays (a token every 3-8 characters, each item judged by its validator): the tokenizer's worst
    case, printed for scale.
(c) Early rejection on the JSON-Schema-Test-Suite draft 2020-12 corpus (tests/data): of the documents the
    full validator refuses, the share the checker cuts while they stream (feed returns an index) and the
    share cut before their last character, and the median cut position as a share of the text. Both ways of
    reading a repeated property name: the last value wins (Python's json; member values then wait for their
    object to close), or refused (unique_keys=True, I-JSON). Target: >= 80% cut before the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rules.schema import CompiledSchema, InvalidSchema, SchemaCache, parse_document
from rules.schema.incremental import REPEATED_NAMES_REFUSED, StreamChecker

SUITE = Path(__file__).parents[1] / "tests" / "data" / "json-schema-test-suite" / "draft2020-12"

STATUS = {"type": "string", "enum": ["new", "open", "pending", "resolved", "closed"]}
SCHEMA: dict[str, object] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "ticket_id": {"type": "string", "pattern": "^TCK-[0-9]{6}$"},
        "title": {"type": "string", "minLength": 5, "maxLength": 120},
        "summary": {"type": "string", "maxLength": 600},
        "status": STATUS,
        "priority": {"type": "integer", "minimum": 1, "maximum": 5},
        "severity": {"enum": ["low", "medium", "high", "critical"]},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "is_duplicate": {"type": "boolean"},
        "duplicate_of": {"type": ["string", "null"]},
        "language": {"type": "string", "maxLength": 8},
        "created_at": {"type": "string", "format": "date-time"},
        "tags": {"type": "array", "items": {"type": "string", "maxLength": 32}, "maxItems": 10, "uniqueItems": True},
        "customer": {
            "type": "object", "additionalProperties": False, "required": ["name", "tier"],
            "properties": {"name": {"type": "string"}, "tier": {"enum": ["free", "pro", "enterprise"]},
                           "email": {"type": "string", "format": "email"}, "seats": {"type": "integer"}}},
        "actions": {
            "type": "array", "maxItems": 8,
            "items": {"type": "object", "required": ["step", "owner"], "additionalProperties": False,
                      "properties": {"step": {"type": "string"}, "owner": {"type": "string"},
                                     "due_days": {"type": "integer", "minimum": 0}}}},
        "sentiment": {"type": "number", "minimum": -1, "maximum": 1},
        "product": {"type": "string"},
        "version": {"type": "string", "pattern": "^[0-9]+\\.[0-9]+(\\.[0-9]+)?$"},
        "escalate": {"type": "boolean"},
        "estimated_hours": {"type": "number", "exclusiveMinimum": 0},
        "notes": {"type": ["string", "null"], "maxLength": 400},
    },
    "required": ["ticket_id", "title", "summary", "status", "priority", "severity", "confidence", "is_duplicate",
                 "tags", "customer", "actions"],
}
ANSWER: dict[str, object] = {
    "ticket_id": "TCK-004217",
    "title": "Export to CSV drops rows with non-ASCII customer names",
    "summary": ("Since the 4.2 upgrade, exporting the monthly report to CSV silently omits every row whose "
                "customer name contains a character outside ASCII (for example Müller, Østergaard or 张伟). The "
                "row count in the UI and in the file differ; no error is shown. Reproduced on two accounts "
                "with the default export settings and with UTF-8 BOM enabled."),
    "status": "open",
    "priority": 2,
    "severity": "high",
    "confidence": 0.87,
    "is_duplicate": False,
    "duplicate_of": None,
    "language": "en",
    "created_at": "2026-11-28T09:14:03Z",
    "tags": ["export", "csv", "unicode", "regression", "reports"],
    "customer": {"name": "Nordlicht Logistik GmbH", "tier": "enterprise", "email": "it-ops@nordlicht.example",
                 "seats": 240},
    "actions": [
        {"step": "Confirm the encoding path of the CSV writer since 4.2", "owner": "backend", "due_days": 2},
        {"step": "Add a regression test with names in Latin-1, Cyrillic and CJK", "owner": "qa", "due_days": 3},
        {"step": "Tell the customer the workaround: export as XLSX until the fix ships", "owner": "support",
         "due_days": 0},
        {"step": "Check whether the PDF and JSON exports share the writer and the same fault", "owner": "backend",
         "due_days": 4},
        {"step": "Write the release note for 4.2.2 naming the affected export settings", "owner": "docs",
         "due_days": 5},
    ],
    "sentiment": -0.42,
    "product": "Reports",
    "version": "4.2.1",
    "escalate": True,
    "estimated_hours": 6.5,
    "notes": ("The customer's finance team relies on the export for month-end closing on 2026-11-30; a "
              "fix or a confirmed workaround is needed before then. Previous ticket TCK-003988 touched the "
              "same writer for the delimiter option. The account manager asked to be copied on every update, "
              "and the customer offered a sample file with 1,200 rows to reproduce the fault."),
}


DENSE: list[tuple[str, object, object]] = [
    ("20,000 integers, items integer >= 0", {"type": "array", "items": {"type": "integer", "minimum": 0}},
     list(range(20_000))),
    ("10,000 short strings, items maxLength", {"type": "array", "items": {"type": "string", "maxLength": 20}},
     [f"abc{i}" for i in range(10_000)]),
    ("5,000 objects {a: int, b: str}, closed, a required",
     {"type": "array", "items": {"type": "object", "required": ["a"], "additionalProperties": False,
                                 "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}}},
     [{"a": i, "b": "x"} for i in range(5_000)]),
    ("10,000 items, anyOf integer | string", {"type": "array", "items": {"anyOf": [{"type": "integer"},
                                                                                  {"type": "string"}]}},
     [i if i % 2 else str(i) for i in range(10_000)]),
]


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    """Thread CPU time per call in microseconds, after 50 warm-up calls (the host's two cores are shared:
    wall time would count other processes' turns)."""
    for _ in range(50):
        fn()
    out = []
    for _ in range(runs):
        t0 = time.thread_time_ns()
        fn()
        out.append((time.thread_time_ns() - t0) / 1000)
    return out


def stream(schema: CompiledSchema, text: str, delta: int, *, unique_keys: bool | None = None) -> None:
    checker = StreamChecker(schema, unique_keys=unique_keys)
    for k in range(0, len(text), delta):
        if checker.feed(text[k:k + delta]) is not None:
            raise AssertionError("the benchmark answer was cut")
    if checker.end() is not None:
        raise AssertionError("the benchmark answer is invalid")


def corpus_cuts(*, unique_keys: bool) -> dict[str, float]:
    """Early rejection over the suite's documents that the full validator refuses."""
    cache = SchemaCache(entries=4096)
    refused = cut = before_last = 0
    positions: list[float] = []
    for path in sorted(SUITE.glob("**/*.json")):
        for group in json.loads(path.read_text(encoding="utf-8")):
            try:
                schema = cache.compile(group["schema"])
            except InvalidSchema:
                continue
            for test in group["tests"]:
                text = json.dumps(test["data"])
                checker = StreamChecker(schema, unique_keys=unique_keys)
                index = checker.feed(text)
                if checker.end() is None:
                    continue
                refused += 1
                if index is not None:
                    cut += 1
                    before_last += index < len(text) - 1
                    positions.append(index / len(text))
    return {"refused": refused, "cut": cut / refused, "before_last": before_last / refused,
            "median_position": statistics.median(positions)}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="output JSON-Schema validation cost and early rejection")
    ap.add_argument("--runs", type=int, default=3000, help="whole-answer validations per engine")
    ap.add_argument("--stream-runs", type=int, default=300, help="streamed answers per row")
    ap.add_argument("--delta", type=int, default=4, help="characters per streamed piece")
    args = ap.parse_args(argv)

    schema = SchemaCache().compile(SCHEMA)
    text = json.dumps(ANSWER, indent=2, ensure_ascii=False)
    assert not schema.violations(json.loads(text))
    print(f"answer: {len(text.encode())} B UTF-8, {len(text)} characters; schema: "
          f"{len(SCHEMA['properties'])} properties")  # type: ignore[arg-type]

    def whole() -> object:
        document = parse_document(text)
        return schema.violations(document.value)

    rows = [("jsonschema-rs: parse_document + violations", timed(whole, args.runs))]
    try:
        import jsonschema
    except ImportError:
        print("jsonschema (pure Python): not installed, its row is left out")
    else:
        slow = jsonschema.Draft202012Validator(SCHEMA)
        rows.append(("jsonschema 4 (pure Python): json.loads + is_valid",
                     timed(lambda: slow.is_valid(json.loads(text)), max(100, args.runs // 20))))
    print("\n(a) whole answer                                        p50 us     p99 us    ratio p50")
    base = statistics.median(rows[0][1])
    for name, samples in rows:
        p50 = statistics.median(samples)
        print(f"{name:<52} {p50:>9.1f} {percentile(samples, 0.99):>10.1f} {p50 / base:>11.1f}x")
    p50, p99 = statistics.median(rows[0][1]), percentile(rows[0][1], 0.99)
    print(f"target p50 <= 50 us, p99 <= 200 us: {'met' if p50 <= 50 and p99 <= 200 else 'MISSED'}")

    print(f"\n(b) stream checker, feed + end                          us/char    us/answer   (median of "
          f"{args.stream_runs})")
    per_char = {}
    default = REPEATED_NAMES_REFUSED
    for label, delta, unique in [(f"{args.delta}-character pieces", args.delta, default),
                                 (f"{args.delta}-character pieces, unique_keys={not default}", args.delta, not default),
                                 ("1-character pieces", 1, default), ("one piece", len(text), default)]:
        samples = timed(lambda d=delta, u=unique: stream(schema, text, d, unique_keys=u),  # type: ignore[misc]
                        args.stream_runs)
        per_char[label] = statistics.median(samples) / len(text)
        print(f"{label:<52} {per_char[label]:>9.2f} {statistics.median(samples):>12.0f}")
    cost = per_char[f"{args.delta}-character pieces"]
    print(f"target <= 2 us per character at {args.delta}-character pieces: {'met' if cost <= 2 else 'MISSED'}")
    print(f"dense arrays (the tokenizer's worst case: a token every few characters), {args.delta}-character pieces:")
    for label, dense_schema, dense in DENSE:
        compiled = SchemaCache().compile(dense_schema)
        dense_text = json.dumps(dense)
        samples = timed(lambda s=compiled, t=dense_text: stream(s, t, args.delta),  # type: ignore[misc]
                        max(5, args.stream_runs // 50))
        print(f"  {label:<50} {statistics.median(samples) / len(dense_text):>9.2f} "
              f"{statistics.median(samples):>12.0f}")

    print("\n(c) JSON-Schema-Test-Suite 2020-12, refused documents   refused   cut while streaming   "
          "before last char   median cut at")
    for label, unique in [("unique_keys=False (a repeated name: the last wins)", False),
                          ("unique_keys=True (a repeated name refused)", True)]:
        found = corpus_cuts(unique_keys=unique)
        print(f"{label:<52} {found['refused']:>9.0f} {found['cut']:>20.1%} {found['before_last']:>18.1%} "
              f"{found['median_position']:>14.0%}")
    print("target >= 80% cut before the end (feed returns an index; end() not needed)")
    print(f"default: unique_keys={REPEATED_NAMES_REFUSED}, as parse_document "
          f"{'refuses' if REPEATED_NAMES_REFUSED else 'takes'} repeated property names")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
