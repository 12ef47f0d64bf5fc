"""`warden scan`: the detection engine over stdin (rules/cli.py), with the semantic stage on by default."""

from __future__ import annotations

import argparse

from proxy.guard.semantic import fusion_filters, load_detectors
from rules import cli
from rules.findings import Detector


def main(argv: list[str]) -> int:
    parser = cli.build_parser()
    parser.add_argument("--no-semantic", action="store_true",
                        help="lexical detectors only (the semantic model is on by default, built on first use)")

    def detectors(args: argparse.Namespace) -> list[Detector]:
        return [] if args.no_semantic else load_detectors()

    return cli.main(argv, parser=parser, extra_detectors=detectors, filters=fusion_filters)
