"""What telemetry costs: `warden serve` with tracing off (no OTEL_* variables: exporter none) against tracing
on (every request sampled, OTLP/HTTP to a receiver on loopback), in the same run against the same stand-in.

Metrics are always on (they are part of both). Proxy CPU per request comes from /proc (utime + stime of the
proxy process, so the SDK's export thread counts; the receiver runs in this process and does not). Each
round starts both proxies afresh and sends each phase's requests (c=1, c=16, streams) in blocks of `--block`
requests, alternating between the two proxies (ABBA), so that both see the same background load on a shared
machine: whole phases in turn (the first version) moved by +-15% between runs as other work came and went.
Per configuration, a round's figure is its CPU over all its blocks; the medians over `--rounds` rounds are
compared, and the added CPU is also given pooled (all rounds' CPU over all rounds' requests).

A control: a second tracing-off proxy runs in every round beside the other two (unless `--no-control`). Two
identical proxies differ by several percent per request in one round (measured 2026-12-01, A/A at c=16 in
8 alternating blocks of 500: -3% to +5%: memory layout, hash seeds, which core), which is the size of the
effect measured here, so the control's difference from the tracing-off proxy is printed as the noise floor of
the same run. Target: added CPU per request under 10%. Nothing is asserted: it is a report.
Run: .venv/bin/python bench/telemetry.py [--quick] [--requests N] [--rounds R] [--no-control]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import overhead
from bench.overhead import PROMPT, PY, REPO, Target, free_port, pct, run_requests, stop, wait_port
from tests.e2e.otlp_receiver import start_receiver

TARGET_ADDED_CPU = 0.10
OFF, ON, CONTROL = "tracing off (exporter none)", "tracing on (otlp, loopback)", "tracing off, control instance"
PHASES = ("cpu_req_c1", "cpu_req_c16", "cpu_stream")
EXPORT_SETTLE_S = 5.5  # > the batch span processor's default schedule delay (5 s)
# bench/overhead.py's chat body, with an answer no guard rule touches: a blocked answer is a 400, which the
# load generator treats as a failure (and which would measure the block path, not telemetry).
overhead.CHAT_BODY = json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": PROMPT}],
                                 "standin": {"reply": "Done.", "prefix_cache": False}}).encode()


def preflight(port: int) -> None:
    for body in (overhead.CHAT_BODY, overhead.SSE_BODY):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", "/v1/chat/completions", body=body, headers=overhead.HEADERS)
        response = conn.getresponse()
        data = response.read()
        conn.close()
        if response.status != 200:
            raise SystemExit(f"the benchmark request is not answered 200 but {response.status}: {data[:300]!r}")


def start_warden(upstream: str, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    command = [PY, "-m", "proxy.cli", "serve", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
               "--admin", f"127.0.0.1:{free_port()}", "--log-level", "warning"]
    clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    proc = subprocess.Popen(command, cwd=REPO, env={**clean, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_port(port, timeout=90)  # start-up loads the rules and the semantic model
    time.sleep(0.5)
    return proc, port


def thread_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds of the main thread (the event loop) and of all other threads (the span exporter, ...)."""
    main = other = 0.0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if int(tid) == pid:
            main += seconds
        else:
            other += seconds
    return main, other


def paired_measure(targets: dict[str, Target], n: int, block: int) -> dict[str, dict[str, float]]:
    """bench/overhead.py's `measure` for several proxies at once: every phase in blocks, alternating."""
    for target in targets.values():
        run_requests(target.port, overhead.CHAT_BODY, 100, 4, stream=False)  # warm-up
    results: dict[str, dict[str, float]] = {name: {} for name in targets}
    threads: dict[str, tuple[float, float]] = {name: thread_cpu(t.proc.pid) for name, t in targets.items()
                                                if t.proc}
    streams = max(20, n // 20)
    phases = [(f"c{c}", overhead.CHAT_BODY, n, c, False, block) for c in (1, 16)]
    phases.append(("stream", overhead.SSE_BODY, streams, 1, True, max(5, block // 20)))
    for phase, body, total, concurrency, stream, size in phases:
        cpu = dict.fromkeys(targets, 0.0)
        lat: dict[str, list[float]] = {name: [] for name in targets}
        firsts: dict[str, list[float]] = {name: [] for name in targets}
        order = list(targets.items())
        for i, start in enumerate(range(0, total, size)):
            count = min(size, total - start)
            for name, target in order if i % 2 == 0 else reversed(order):
                before = target.cpu()
                latencies, first = run_requests(target.port, body, count, concurrency, stream=stream)
                cpu[name] += target.cpu() - before
                lat[name] += latencies
                firsts[name] += first
        # The SDK's batch processor exports on a timer (OTEL_BSP_SCHEDULE_DELAY, 5 s): without this wait, a
        # phase's spans are sent during the next phase and their cost lands there (the short stream phase
        # read +13% from the c=16 phase's exports). Both proxies idle through the same wait.
        before_settle = {name: target.cpu() for name, target in targets.items()}
        time.sleep(EXPORT_SETTLE_S)
        for name, target in targets.items():
            cpu[name] += target.cpu() - before_settle[name]
        for name in targets:
            r = results[name]
            if stream:
                r["cpu_stream"] = cpu[name] / len(lat[name])
                r["ttfe_p50"] = statistics.median(firsts[name])
            else:
                r[f"cpu_req_{phase}"] = cpu[name] / len(lat[name])
                r[f"p50_{phase}"] = statistics.median(lat[name])
                r[f"p99_{phase}"] = pct(lat[name], 0.99)
    time.sleep(0.3)  # let the exporter finish its last batch
    exchanges = 100 + 2 * n + streams
    for name, target in targets.items():
        if target.proc:
            start_cpu, end_cpu = threads[name], thread_cpu(target.proc.pid)
            results[name]["cpu_main_thread"] = (end_cpu[0] - start_cpu[0]) / exchanges
            results[name]["cpu_other_threads"] = (end_cpu[1] - start_cpu[1]) / exchanges
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer requests and one round (a smoke run)")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--block", type=int, default=250, help="requests per block before switching proxies")
    parser.add_argument("--breakdown", action="store_true", help="also measure tracing with sampling off")
    parser.add_argument("--no-control", action="store_true", help="no second tracing-off proxy (A/A control)")
    args = parser.parse_args()
    n = 320 if args.quick else args.requests
    rounds = 1 if args.quick else args.rounds
    receiver = start_receiver(keep_raw=False, decode=False)  # a sink: decoding would compete for the CPU
    up_port = free_port()
    standin = subprocess.Popen([PY, "-m", "proxy.cli", "standin", "--port", str(up_port)], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(up_port)
    upstream = f"http://127.0.0.1:{up_port}"
    configs = {
        OFF: {"OTEL_TRACES_EXPORTER": "none"},
        ON: {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
             "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{receiver.endpoint}/v1/traces",
             "OTEL_TRACES_SAMPLER": "always_on"},
    }
    if not args.no_control:  # the same configuration as the first, in a process of its own: the noise floor
        configs[CONTROL] = {"OTEL_TRACES_EXPORTER": "none"}
    if args.breakdown:  # where the cost goes: propagation and sampling only, nothing recorded or exported
        configs["tracing on, sampler always_off"] = {**configs[ON], "OTEL_TRACES_SAMPLER": "always_off"}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in configs}
    try:
        for r in range(rounds):
            order = list(configs.items())
            targets: dict[str, Target] = {}
            try:
                for name, env in order if r % 2 == 0 else reversed(order):  # ABBA: no configuration always first
                    proc, port = start_warden(upstream, env)
                    targets[name] = Target(name, port, proc)
                    preflight(port)
                for name, result in paired_measure(targets, n, args.block).items():
                    results[name].append(result)
            finally:
                for target in targets.values():
                    if target.proc:
                        stop(target.proc)
            print(f"round {r + 1}/{rounds}: measured {', '.join(targets)}", file=sys.stderr)
    finally:
        standin.terminate()
        receiver.close()
    report(results, n, rounds, receiver.requests_received, receiver.bytes_received)


def pooled(runs: list[dict[str, float]], key: str) -> float:
    """A phase's CPU per request over all rounds together (every round sends the same number of requests, so
    this is the mean of the rounds' figures)."""
    return statistics.fmean(r[key] for r in runs)


Ranges = dict[str, tuple[float, float]]


def added_rows(results: dict[str, list[dict[str, float]]], base: str,
               other: str) -> tuple[dict[str, float], dict[str, float], Ranges]:
    """`other` against `base`: the ratio of medians, the pooled ratio and the range of per-round ratios."""
    med: dict[str, float] = {}
    pool: dict[str, float] = {}
    spread: Ranges = {}
    for key in PHASES:
        a = [r[key] for r in results[base]]
        b = [r[key] for r in results[other]]
        med[key] = statistics.median(b) / statistics.median(a) - 1
        pool[key] = pooled(results[other], key) / pooled(results[base], key) - 1
        per_round = [y / x - 1 for x, y in zip(a, b, strict=True)]
        spread[key] = (min(per_round), max(per_round))
    return med, pool, spread


def report(results: dict[str, list[dict[str, float]]], n: int, rounds: int, posts: int, size: int) -> None:
    med = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]} for name, runs in results.items()}
    off, on = med[OFF], med[ON]
    ms = 1000.0
    print(f"\n{n} chat requests (1 KB prompt) at c=1 and c=16, {max(20, n // 20)} streams of 200 SSE events; "
          f"medians of {rounds} rounds of alternating blocks; {posts} OTLP/HTTP exports received "
          f"({size / 1e6:.1f} MB)\n")
    head = ("config", "CPU/req c1", "CPU/req c16", "CPU/stream", "p50 c1", "p99 c1", "p50 c16", "TTFE p50",
            "loop thread/exchange", "other threads/exchange")
    rows: list[tuple[str, ...]] = [head]
    for name, r in med.items():
        rows.append((name, f"{r['cpu_req_c1'] * ms:.3f} ms", f"{r['cpu_req_c16'] * ms:.3f} ms",
                     f"{r['cpu_stream'] * ms:.2f} ms", f"{r['p50_c1'] * ms:.2f} ms", f"{r['p99_c1'] * ms:.2f} ms",
                     f"{r['p50_c16'] * ms:.2f} ms", f"{r['ttfe_p50'] * ms:.2f} ms",
                     f"{r['cpu_main_thread'] * ms:.3f} ms", f"{r['cpu_other_threads'] * ms:.3f} ms"))

    def delta(key: str) -> str:
        return f"{(on[key] - off[key]) * ms:+.2f} ms"

    added, pool, spread = added_rows(results, OFF, ON)
    rows.append(("added by tracing (medians)", f"{added['cpu_req_c1']:+.1%}", f"{added['cpu_req_c16']:+.1%}",
                 f"{added['cpu_stream']:+.1%}", delta("p50_c1"), "", delta("p50_c16"), delta("ttfe_p50"),
                 delta("cpu_main_thread"), delta("cpu_other_threads")))
    rows.append(("added by tracing (pooled)", *(f"{pool[k]:+.1%}" for k in PHASES), "", "", "", "", "", ""))
    rows.append(("  per-round range", *(f"{lo:+.0%}..{hi:+.0%}" for lo, hi in (spread[k] for k in PHASES)),
                 "", "", "", "", "", ""))
    if CONTROL in results:
        c_med, c_pool, c_spread = added_rows(results, OFF, CONTROL)
        rows.append(("control vs off (noise, medians)", *(f"{c_med[k]:+.1%}" for k in PHASES), "", "", "", "", "",
                     ""))
        rows.append(("control vs off (noise, pooled)", *(f"{c_pool[k]:+.1%}" for k in PHASES), "", "", "", "", "",
                     ""))
        rows.append(("  per-round range", *(f"{lo:+.0%}..{hi:+.0%}" for lo, hi in (c_spread[k] for k in PHASES)),
                     "", "", "", "", "", ""))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for i, row in enumerate(rows):
        cells = enumerate(zip(row, widths, strict=True))
        print("  ".join(cell.rjust(w) if j else cell.ljust(w) for j, (cell, w) in cells))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    worst = max(added["cpu_req_c1"], added["cpu_req_c16"])
    worst_pooled = max(pool["cpu_req_c1"], pool["cpu_req_c16"])
    verdict = "meets" if max(worst, worst_pooled) < TARGET_ADDED_CPU else "MISSES"
    print(f"\nadded CPU per request: {worst:+.1%} (medians), {worst_pooled:+.1%} (pooled), worst of c=1, c=16; "
          f"{verdict} the target of {TARGET_ADDED_CPU:.0%}")
    if CONTROL in results:
        noise = max(abs(c_pool["cpu_req_c1"]), abs(c_pool["cpu_req_c16"]))
        print(f"noise floor of this run (two tracing-off proxies, pooled): {noise:.1%}")


if __name__ == "__main__":
    main()
