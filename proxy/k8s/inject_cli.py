"""`warden inject -f FILE|- [-o FILE]`: add the Warden sidecar to manifests, like `istioctl kube-inject`.

Reads multi-document YAML (or JSON, which is YAML), injects every selected pod (template) with
`proxy.k8s.inject.inject_report`, and writes the documents back in order; kinds without pods pass through
unchanged. stderr says, one line per pod (template) or object, what was injected and what was skipped and why.
A refused pod (its model server's port cannot be moved with certainty, a bad annotation) is named there with
the container and the reason, nothing is written to the output, and the exit status is 1: a manifest applied
with one pod silently left behind is worse than none.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

import yaml

from proxy.k8s.inject import Decision, InjectError, InjectOptions, default_image, inject_report

EXIT_ERROR = 1
EXIT_USAGE = 64


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warden inject", description="Add the Warden sidecar to Kubernetes manifests "
                                "(Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, List).")
    p.add_argument("-f", "--filename", required=True, help="manifest file, or - for stdin")
    p.add_argument("-o", "--output", help="write here instead of stdout")
    p.add_argument("--image", default=None, help=f"sidecar image (default {default_image()})")
    p.add_argument("--native-sidecar", action=argparse.BooleanOptionalAction, default=True,
                   help="an init container with restartPolicy: Always (Kubernetes >= 1.29; default on)")
    p.add_argument("--all", dest="all_pods", action="store_true",
                   help='inject pods without the warden.io/inject label too ("false" still opts out)')
    p.add_argument("--cluster", help="cluster name for audit origins (WARDEN_CLUSTER in the sidecar)")
    return p


def options_from(args: argparse.Namespace) -> InjectOptions:
    options = InjectOptions(native_sidecar=args.native_sidecar, require_label=not args.all_pods,
                            cluster=args.cluster)
    return dataclasses.replace(options, image=args.image) if args.image else options


def transform(text: str, options: InjectOptions) -> tuple[str, list[Decision]]:
    """The injected manifests and what was decided for each pod (template) or object."""
    docs: list[Any] = [d for d in yaml.safe_load_all(text) if d is not None]
    out: list[Any] = []
    decisions: list[Decision] = []
    for doc in docs:
        if isinstance(doc, dict):
            injected, decided = inject_report(doc, options)
            out.append(injected)
            decisions += decided
        else:
            out.append(doc)
    return yaml.safe_dump_all(out, sort_keys=False, explicit_start=len(out) > 1, allow_unicode=True), decisions


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else EXIT_USAGE
    try:
        text = sys.stdin.read() if args.filename == "-" else Path(args.filename).read_text(encoding="utf-8")
        result, decisions = transform(text, options_from(args))
        for decision in decisions:
            print(f"warden inject: {decision}", file=sys.stderr)
        refused = [d for d in decisions if d.outcome == "refused"]
        if refused:
            print(f"warden inject: {len(refused)} refused; nothing written", file=sys.stderr)
            return EXIT_ERROR
        if not any(d.outcome == "injected" for d in decisions):
            print("warden inject: nothing injected", file=sys.stderr)
        if args.output:
            Path(args.output).write_text(result, encoding="utf-8")
        else:
            sys.stdout.write(result)
    except (OSError, yaml.YAMLError, InjectError) as exc:
        print(f"warden inject: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return 0
