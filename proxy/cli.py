"""The `warden` command. Dispatches to one subcommand module, imported only when chosen.

Lazy imports keep `warden audit verify` free of mitmproxy and onnxruntime, and every command fast to start.
Each subcommand module exposes `main(argv: list[str]) -> int` and builds its own argparse parser.
"""

from __future__ import annotations

import importlib
import os
import sys

# name -> (module, one-line help). The order is the order of `warden --help`.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("proxy.serve", "run the reverse proxy in front of a model server"),
    "demo": ("proxy.dev.demo", "a self-contained tour: stand-in model server, proxy, requests, audit verify"),
    "standin": ("proxy.dev.standin", "a stand-in OpenAI-compatible model server for demos and tests"),
    "scan": ("proxy.scan", "scan text or JSONL from stdin with the detectors, one JSON object per input"),
    "audit": ("audit.cli", "verify, prove and show the tamper-evident audit log"),
    "models": ("models.cli", "build, train and evaluate the semantic model"),
    "inject": ("proxy.k8s.inject_cli", "add the Warden sidecar to Kubernetes manifests (like istioctl kube-inject)"),
    "webhook": ("proxy.k8s.webhook", "serve the sidecar injection as a Kubernetes mutating admission webhook"),
}

EXIT_USAGE = 64

# The commands that judge traffic run numpy's BLAS on one thread (unless the environment says otherwise). Left to
# itself OpenBLAS starts a thread per core and they spin between the small products the heads and the exemplar memory
# run per window: on bench/semantic.py's mix the process used 8.5-9.0 ms of CPU per prompt against 4.2-4.3 on one
# thread, for the same wall time (session 25), a second core taken from the model server beside it, and N workers
# each started N threads. Set before the subcommand's module imports numpy; onnxruntime has its own setting.
ONE_BLAS_THREAD = frozenset({"serve", "scan", "demo"})


def usage() -> str:
    width = max(len(name) for name in SUBCOMMANDS)
    lines = ["usage: warden <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in SUBCOMMANDS.items()]
    lines += ["", "Run `warden <command> --help` for a command's options."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in {"-h", "--help", "help"}:
        print(usage())
        return 0 if args else EXIT_USAGE
    if args[0] == "--version":
        from importlib.metadata import version

        print(f"warden {version('llm-warden')}")
        return 0
    entry = SUBCOMMANDS.get(args[0])
    if entry is None:
        print(f"warden: unknown command {args[0]!r}\n\n{usage()}", file=sys.stderr)
        return EXIT_USAGE
    if args[0] in ONE_BLAS_THREAD:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    module = importlib.import_module(entry[0])
    result: int = module.main(args[1:])
    return result


if __name__ == "__main__":
    raise SystemExit(main())
