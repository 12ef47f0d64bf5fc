"""`warden scan`: run the detectors over text or JSONL from stdin, one JSON object per input on stdout.

    warden scan [--rules FILE ...] [--jsonl] [--no-builtin]

Plain-text mode: every line is one input, id = line number from 1. JSONL mode: every line is an object with
`id` and `text`. Output per input (a stable interface for evaluation and pipelines; keep its shape):

    {"id": ..., "action": "mask", "findings": [{"kind", "category", "start", "end", "rule", "action",
     "score"}], "masked": "..."}

Offsets are Python string indices into the raw input (the line without its line break).
Exit codes: 0 done, 64 usage, 65 bad input line, 78 bad rule file.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from rules import masking
from rules.errors import RulesError
from rules.findings import Detector, FindingFilter
from rules.scanner import Scanner

EXIT_OK = 0
EXIT_USAGE = 64
EXIT_DATAERR = 65
EXIT_CONFIG = 78


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warden scan", description="Scan text or JSONL from stdin.")
    p.add_argument("--rules", metavar="FILE", nargs="+", action="extend", default=[],
                   help="rule files (YAML or JSON), applied after the builtin packs, in order")
    p.add_argument("--jsonl", action="store_true", help='input lines are JSON objects {"id", "text"}')
    p.add_argument("--no-builtin", action="store_true", help="do not load the builtin rule packs")
    return p


def result_object(ident: Any, text: str, scanner: Scanner) -> dict[str, Any]:
    result = scanner.scan(text)
    return {
        "id": ident,
        "action": result.action.value,
        "findings": [
            {
                "kind": d.finding.kind,
                "category": d.finding.category,
                "start": d.finding.start,
                "end": d.finding.end,
                "rule": d.finding.rule,
                "action": d.action.value,
                "score": d.finding.score,
            }
            for d in result.decisions
        ],
        "masked": masking.apply(text, result, None),
    }


def run(scanner: Scanner, stdin: TextIO, stdout: TextIO, *, jsonl: bool) -> int:
    for lineno, raw in enumerate(stdin, 1):
        line = raw[:-1] if raw.endswith("\n") else raw
        line = line[:-1] if line.endswith("\r") else line
        if jsonl:
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                print(f"warden scan: line {lineno}: not JSON: {exc.msg}", file=sys.stderr)
                return EXIT_DATAERR
            except RecursionError:
                print(f"warden scan: line {lineno}: not JSON: nested too deeply", file=sys.stderr)
                return EXIT_DATAERR
            if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
                print(f"warden scan: line {lineno}: expected an object with a string 'text'", file=sys.stderr)
                return EXIT_DATAERR
            ident, text = obj.get("id", lineno), obj["text"]
        else:
            ident, text = lineno, line
        stdout.write(json.dumps(result_object(ident, text, scanner), ensure_ascii=False) + "\n")
    stdout.flush()
    return EXIT_OK


def main(argv: list[str], *, parser: argparse.ArgumentParser | None = None,
         extra_detectors: Callable[[argparse.Namespace], Sequence[Detector]] | None = None,
         filters: Callable[[Sequence[Detector]], Sequence[FindingFilter]] | None = None) -> int:
    """`warden scan`. Callers above `rules` (proxy/scan.py) plug in detectors, such as the semantic model,
    that `rules` itself may not import: `extra_detectors(args)` and `filters(detectors)`."""
    parser = parser or build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        detectors = extra_detectors(args) if extra_detectors else ()
        scanner = Scanner.load(args.rules, builtin=not args.no_builtin, extra_detectors=detectors,
                               filters=filters(detectors) if filters else ())
    except RulesError as exc:
        print(f"warden scan: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", newline="", closefd=False)  # noqa: SIM115
    stdout = open(sys.stdout.fileno(), "w", encoding="utf-8", newline="\n", closefd=False)  # noqa: SIM115
    try:
        return run(scanner, stdin, stdout, jsonl=args.jsonl)
    except BrokenPipeError:
        return EXIT_OK
    finally:
        stdout.flush()
