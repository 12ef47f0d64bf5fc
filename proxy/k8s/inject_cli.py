"""`warden inject -f FILE|- [-o FILE]`: add the Warden sidecar to manifests, like `istioctl kube-inject`.

Reads multi-document YAML (or JSON, which is YAML), injects every selected pod (template) with
`proxy.k8s.inject.inject`, and writes the documents back in order; kinds without pods pass through unchanged.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

import yaml

from proxy.k8s.inject import InjectError, InjectOptions, default_image, inject

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


def transform(text: str, options: InjectOptions) -> str:
    docs: list[Any] = [d for d in yaml.safe_load_all(text) if d is not None]
    out = [inject(d, options) if isinstance(d, dict) else d for d in docs]
    return yaml.safe_dump_all(out, sort_keys=False, explicit_start=len(out) > 1, allow_unicode=True)


def main(argv: list[str]) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else EXIT_USAGE
    try:
        text = sys.stdin.read() if args.filename == "-" else Path(args.filename).read_text(encoding="utf-8")
        result = transform(text, options_from(args))
        if args.output:
            Path(args.output).write_text(result, encoding="utf-8")
        else:
            sys.stdout.write(result)
    except (OSError, yaml.YAMLError, InjectError) as exc:
        print(f"warden inject: {exc}", file=sys.stderr)
        return EXIT_ERROR
    return 0
