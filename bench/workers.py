"""`warden serve --workers N`: chat requests/s at c=64, Warden's CPU per request and cores busy, peak RSS per
worker (1 and 2 workers, alternated rounds); and the audit append rate of a pod with workers, for the two
designs issue 26 allows: one chain per worker (what Warden does) and one writer process fed over a local
socket.

    .venv/bin/python -m bench.workers [--rounds 3] [--seconds 10] [--connections 64] [--semantic]
    .venv/bin/python -m bench.workers --audit-only [--records 40000]

Load: `wrk` (C, keep-alive, 2 threads) posting the 1 KB chat request of bench/overhead.py to the stand-in
(proxy/dev/standin.py) through `warden serve --no-semantic --audit-dir ...` (guard and audit on). On a
2-core machine wrk and the stand-in share the cores with Warden, so requests/s says little about Warden's
own scaling: the CPU its processes (supervisor and workers, from /proc) spend per request, and the cores
they keep busy, do. Needs `wrk` (Debian package). Prints medians over rounds; asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import re
import resource
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.overhead import free_port, wait_port

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
# bench/overhead.py's chat request: a 1 KB prompt, a two-letter answer.
PROMPT = ("Summarise the following text in one sentence. " * 22)[:1000]
CHAT_BODY = json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": PROMPT}],
                        "standin": {"reply": "ok", "prefix_cache": False}}).encode()


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(15)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process and its threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def warden_cpu(pid: int) -> float:
    """CPU seconds of the supervisor (or the one process) and its live workers."""
    total = 0.0
    for p in [pid, *children(pid)]:
        with contextlib.suppress(OSError):
            total += cpu_seconds(p)
    return total


def metric(admin: int, name: str) -> dict[str, float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{admin}/metrics", timeout=10) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith(name):
            labels, _, value = line.rpartition(" ")
            out[labels] = float(value)
    return out


def wait_ready(admin: int, proc: subprocess.Popen[bytes], timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"warden exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{admin}/readyz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError("warden not ready")


def wrk(port: int, seconds: float, connections: int, script: Path) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{int(seconds)}s", "--latency", "-s", str(script),
                          f"http://127.0.0.1:{port}/v1/chat/completions"], capture_output=True, text=True,
                         check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    p50 = re.search(r"50%\s+([\d.]+)(us|ms|s)", out)
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)

    def ms(m: re.Match[str] | None) -> float:
        if m is None:
            return 0.0
        return float(m.group(1)) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m.group(2)]

    return {"requests": requests, "bad": int(bad.group(1)) if bad else 0, "p50_ms": ms(p50), "p99_ms": ms(p99),
            "wrk_cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)}


def serve_round(upstream: str, workers: int, seconds: float, connections: int, script: Path, root: Path,
                semantic: bool) -> dict[str, float]:
    port, admin = free_port(), free_port()
    audit = root / f"audit-{workers}-{port}"
    command = [PY, "-m", "proxy.cli", "serve", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
               "--admin", f"127.0.0.1:{admin}", "--workers", str(workers), "--audit-dir", str(audit),
               "--log-level", "warning"]
    if not semantic:
        command.append("--no-semantic")
    proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port, 180)
        wait_ready(admin, proc)
        wrk(port, 3, connections, script)  # warm-up: connections, caches, the first scans
        cpu0, served0 = warden_cpu(proc.pid), metric(admin, "warden_worker_requests_total")
        start = time.perf_counter()
        load = wrk(port, seconds, connections, script)
        wall = time.perf_counter() - start
        cpu = warden_cpu(proc.pid) - cpu0
        served = metric(admin, "warden_worker_requests_total")
        shares = sorted(served[k] - served0.get(k, 0.0) for k in served)
        pids = children(proc.pid) if workers > 1 else [proc.pid]
        rss = [peak_rss_mib(p) for p in pids]
        supervisor_rss = peak_rss_mib(proc.pid) if workers > 1 else 0.0
    finally:
        stop(proc)
        shutil.rmtree(audit, ignore_errors=True)
    return {"rps": load["requests"] / wall, "cpu_ms_per_req": 1000 * cpu / max(1, load["requests"]),
            "cores": cpu / wall, "rss_max": max(rss), "supervisor_rss": supervisor_rss,
            "p50_ms": load["p50_ms"], "p99_ms": load["p99_ms"], "bad": load["bad"],
            "wrk_cores": load["wrk_cpu"] / wall, "balance": (shares[0] / shares[-1]) if shares and shares[-1] else 1.0}


def bench_serve(args: argparse.Namespace) -> None:
    if shutil.which("wrk") is None:
        raise SystemExit("bench.workers: needs wrk (apt-get install wrk)")
    root = Path(tempfile.mkdtemp(prefix="warden-bench-workers-"))
    script = root / "chat.lua"
    script.write_text('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n'
                      f"wrk.body = {json.dumps(CHAT_BODY.decode())}\n")
    sport = free_port()
    standin = subprocess.Popen([PY, "-m", "proxy.cli", "standin", "--port", str(sport)], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rows: dict[int, list[dict[str, float]]] = {1: [], 2: []}
    try:
        wait_port(sport)
        s_cpu0 = cpu_seconds(standin.pid)
        for r in range(args.rounds):
            for workers in (1, 2) if r % 2 == 0 else (2, 1):
                row = serve_round(f"http://127.0.0.1:{sport}", workers, args.seconds, args.connections, script, root,
                                  args.semantic)
                rows[workers].append(row)
                print(f"  round {r + 1} workers={workers}: {row['rps']:,.0f} req/s, "
                      f"{row['cpu_ms_per_req']:.2f} ms CPU/req, {row['cores']:.2f} cores, "
                      f"peak RSS/worker {row['rss_max']:.0f} MiB, balance {row['balance']:.2f}, "
                      f"non-2xx {row['bad']:.0f}", flush=True)
        standin_cpu = cpu_seconds(standin.pid) - s_cpu0
    finally:
        stop(standin)
        shutil.rmtree(root, ignore_errors=True)
    med = {w: {k: statistics.median(r[k] for r in rows[w]) for k in rows[w][0]} for w in rows}
    print()
    print(f"chat, 1 KB prompt, c={args.connections}, {args.seconds:g} s x {args.rounds} rounds (medians); "
          f"stand-in used {standin_cpu:.0f} CPU-s in all")
    header = ("workers", "req/s", "CPU ms/req", "Warden cores", "wrk cores", "p50 ms", "p99 ms", "RSS/worker MiB",
              "supervisor MiB", "balance")
    print("".join(f"{h:>15}" for h in header))
    for w in (1, 2):
        m = med[w]
        values = (w, f"{m['rps']:,.0f}", f"{m['cpu_ms_per_req']:.2f}", f"{m['cores']:.2f}", f"{m['wrk_cores']:.2f}",
                  f"{m['p50_ms']:.1f}", f"{m['p99_ms']:.1f}", f"{m['rss_max']:.0f}",
                  f"{m['supervisor_rss']:.0f}" if w > 1 else "-", f"{m['balance']:.2f}")
        print("".join(f"{v:>15}" for v in values))
    print(f"ratios 2/1: req/s {med[2]['rps'] / med[1]['rps']:.2f}x, CPU per request "
          f"{med[2]['cpu_ms_per_req'] / med[1]['cpu_ms_per_req']:.2f}x (target within 1.10x), cores busy "
          f"{med[2]['cores'] / med[1]['cores']:.2f}x (target with 2 workers >= 1.6 cores)")


# --- audit append rate of a pod ------------------------------------------------------------------------------

def _bodies(records: int) -> list[dict[str, object]]:
    from audit.records import ExchangeRecord

    return [ExchangeRecord(
        request_id=f"req-{i:010d}", route="chat", status=200, latency_ms=120 + i % 50,
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736", model="qwen2-7b-instruct", input_tokens=812,
        output_tokens=233, cached_tokens=512, input_digest="ab" * 32, output_digest="cd" * 32, outcome="ok",
        verdicts={"pii": "mask", "words": "pass", "patterns": "pass", "semantic": "skipped"},
        findings={"cn_mobile": 1, "email": 1}).to_body() for i in range(records)]


def _open(directory: Path, keys: Path, name: str) -> object:
    from audit.log import AuditConfig, AuditLog, Origin

    return AuditLog.open(AuditConfig(directory=directory, origin=Origin("bench", "ns", "pod", name), key_dir=keys))


def _own_chain(directory: str, keys: str, index: int, records: int, start: Any, done: Any) -> None:
    log: Any = _open(Path(directory), Path(keys), f"w{index}")
    bodies = _bodies(records)
    start.wait()
    cpu = time.process_time()
    last: Any = None
    for body in bodies:
        last = log.append("exchange", body)
    last.wait(120)
    done.put(("chain", time.perf_counter(), time.process_time() - cpu))
    log.close(30)


def _writer_process(directory: str, keys: str, path: str, producers: int, ready: Any, done: Any) -> None:
    """One writer: reads length-prefixed canonical JSON records from each producer's connection, appends them,
    and acknowledges each read batch once its last record is durable (the answer's release)."""
    log: Any = _open(Path(directory), Path(keys), "writer")
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(producers)
    ready.set()
    cpu = time.process_time()

    def serve(conn: socket.socket) -> None:
        buf = b""
        while True:
            data = conn.recv(1 << 20)
            if not data:
                break
            buf += data
            count, last = 0, None
            while len(buf) >= 4:
                (size,) = struct.unpack_from("!I", buf)
                if len(buf) < 4 + size:
                    break
                last = log.append("exchange", json.loads(buf[4:4 + size]))
                buf = buf[4 + size:]
                count += 1
            if last is not None:
                last.wait(120)
                conn.sendall(struct.pack("!I", count))
        conn.close()

    threads = []
    for _ in range(producers):
        conn, _ = server.accept()
        t = threading.Thread(target=serve, args=(conn,))
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    done.put(("writer", time.perf_counter(), time.process_time() - cpu))
    log.close(30)


def _producer(path: str, records: int, window: int, start: Any, done: Any) -> None:
    bodies = [json.dumps(b, sort_keys=True, separators=(",", ":")).encode() for b in _bodies(records)]
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(path)
    start.wait()
    cpu = time.process_time()
    acked = sent = 0
    pending = b""
    while acked < records:
        while sent < records and sent - acked < window:
            body = bodies[sent]
            conn.sendall(struct.pack("!I", len(body)) + body)
            sent += 1
        pending += conn.recv(4096)
        while len(pending) >= 4:
            acked += struct.unpack_from("!I", pending)[0]
            pending = pending[4:]
    conn.close()
    done.put(("producer", time.perf_counter(), time.process_time() - cpu))


def _run(targets: list[tuple[Callable[..., None], tuple[object, ...]]], start: Any, done: Any,
         expect: int) -> tuple[float, float, float]:
    """Wall time from the common start to the last result, CPU of all, CPU of the writer process alone."""
    procs = [multiprocessing.get_context("spawn").Process(target=t, args=a) for t, a in targets]
    for p in procs:
        p.start()
    time.sleep(2.0)  # every process has opened its log or connected and built its records
    t0 = time.perf_counter()
    start.set()
    results = [done.get(timeout=600) for _ in range(expect)]
    for p in procs:
        p.join(60)
    return (max(r[1] for r in results) - t0, sum(r[2] for r in results),
            sum(r[2] for r in results if r[0] == "writer"))


def bench_audit(records: int, worker_counts: tuple[int, ...] = (1, 2)) -> None:
    ctx = multiprocessing.get_context("spawn")
    print(f"audit append, {records:,} records per pod, ~540-byte lines, fdatasync group commit "
          "(rates from a common start to the last durable record; CPU = all processes)")
    print(f"{'design':<52}{'records/s':>12}{'rec/CPU-s':>12}{'writer rec/CPU-s':>18}")
    with tempfile.TemporaryDirectory(prefix="warden-bench-audit-workers-") as tmp:
        root = Path(tmp)
        keys = root / "keys"
        for n in worker_counts:
            start, done = ctx.Event(), ctx.Queue()
            per = records // n
            wall, cpu, _ = _run([(_own_chain, (str(root / f"own{n}" / f"worker-{i}"), str(keys), i, per, start,
                                               done)) for i in range(n)], start, done, n)
            print(f"{f'one chain per worker, {n} worker(s)':<52}{per * n / wall:>12,.0f}{per * n / cpu:>12,.0f}"
                  f"{per / (cpu / n):>18,.0f}")
        for n in worker_counts:
            start, done, ready = ctx.Event(), ctx.Queue(), ctx.Event()
            per = records // n
            path = str(root / f"writer{n}.sock")
            writer = ctx.Process(target=_writer_process, args=(str(root / f"one{n}"), str(keys), path, n, ready, done))
            writer.start()
            ready.wait(60)
            wall, cpu, writer_cpu = _run([(_producer, (path, per, 256, start, done)) for _ in range(n)], start, done,
                                         n + 1)
            writer.join(60)
            print(f"{f'one writer process, {n} producer(s) over a socket':<52}{per * n / wall:>12,.0f}"
                  f"{per * n / cpu:>12,.0f}{per * n / writer_cpu:>18,.0f}")
    print(f"{'target':<52}{'>= 20,000':>12}")
    print("writer rec/CPU-s: what one log's writer process can take per core it gets (a chain per worker: each"
          " worker's own), the ceiling of a single writer whatever the number of workers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--records", type=int, default=40_000)
    parser.add_argument("--semantic", action="store_true", help="the semantic model on (each worker loads it)")
    parser.add_argument("--audit-only", action="store_true")
    parser.add_argument("--serve-only", action="store_true")
    args = parser.parse_args()
    print(f"bench.workers on {os.cpu_count()} CPUs (load average {os.getloadavg()[0]:.1f}: a shared machine)")
    if not args.audit_only:
        bench_serve(args)
        print()
    if not args.serve_only:
        bench_audit(args.records)


if __name__ == "__main__":
    main()
