"""Soak: minutes of mixed traffic through `warden serve --audit-dir` in front of the stand-in, the stand-in
killed (SIGKILL) and restarted on the same port half-way, then SIGTERM, `warden audit verify` and one exchange
record per request sent.

The mix, per request drawn at random (seeded): plain chat, streamed chat, a prompt the guard blocks, PII that
is masked (and must not come back in clear), malformed JSON (400), a body over `--max-body` (413), an upstream
error (the stand-in's `status` knob), a stream the upstream breaks off (`drop_after_events`) and an upstream
slower than `--upstream-timeout` (504). While the stand-in is down, whatever needs it gets 502.

Each response's outcome is its status and error code (`400 content_blocked`, `502 upstream_unavailable`), `200
stream_error` for a stream that ended with Warden's error event, `200 LEAK` for PII in clear, `429 shed` for
load shedding, or the client's exception class. An outcome other than the one the kind is designed to get is
an error. Printed: requests sent and served, errors by outcome, p50/p99 overall and per kind, peak RSS of the
proxy (VmHWM), CPU of each process, the audit verification and records vs requests. Exit 1 when the audit
does not verify or the counts differ. Loopback only; bounded by --seconds and --max-requests.

Run: .venv/bin/python bench/soak.py [--seconds 180] [--concurrency 16] [--down-seconds 5] [--semantic]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")
sys.path.insert(0, str(REPO))

from bench.overhead import free_port, print_table, stop, wait_port  # noqa: E402

MAX_BODY = 256 * 1024  # --max-body: an oversize request costs 300 KB, not 8 MiB
UPSTREAM_TIMEOUT_S = 2  # --upstream-timeout; the `slow` kind waits longer than this for its headers
ID = "110105199003071239"
PHONE = "13812345678"
HEADERS = {"Content-Type": "application/json"}


def chat(content: str, knobs: dict[str, object], *, stream: bool = False) -> bytes:
    body: dict[str, object] = {"model": "standin-base", "messages": [{"role": "user", "content": content}],
                               "standin": {"prefix_cache": False, **knobs}}
    if stream:
        body["stream"] = True
    return json.dumps(body, ensure_ascii=False).encode()


@dataclass(frozen=True)
class Kind:
    name: str
    weight: int
    expect: str  # the outcome it is designed to get
    body: Callable[[random.Random], bytes]
    leak: str | None = None  # text that must never reach the client


REPLY = "Here is a streamed answer with a few words in it, 你好世界, and some more text to make events. " * 2
KINDS = [
    Kind("plain", 30, "200", lambda r: chat(f"Summarise item {r.randrange(10**6)} in one line.",
                                            {"reply": "A one-line summary."})),
    Kind("stream", 25, "200", lambda r: chat("stream please", {"reply": REPLY, "chars_per_event": 4,
                                                               "chunk_bytes": r.choice([0, 0, 7, 33])},
                                             stream=True)),
    Kind("blocked", 10, "400 content_blocked", lambda r: chat("我想找枪手代考四六级", {})),
    Kind("pii", 10, "200", lambda r: chat(f"请回电{PHONE}，谢谢", {"reply": f"身份证号{ID}已登记"}), leak=ID),
    Kind("bad_json", 5, "400 invalid_json", lambda r: b'{"model": "standin-base", "messages": [{"role": '),
    Kind("oversize", 3, "413 request_too_large", lambda r: chat("x" * (MAX_BODY + 40_000), {})),
    Kind("upstream_5xx", 8, "503 standin_error", lambda r: chat("fail please", {"status": 503})),
    Kind("broken_stream", 7, "200 stream_error",
         lambda r: chat("stream please", {"reply": REPLY, "drop_after_events": 3}, stream=True)),
    Kind("slow", 2, "504 upstream_timeout",
         lambda r: chat("slow please", {"headers_delay_ms": UPSTREAM_TIMEOUT_S * 1000 + 700})),
]


def outcome_of(status: int, data: bytes, is_stream: bool, leak: str | None) -> str:
    if leak is not None and leak.encode() in data:
        return f"{status} LEAK"
    if status == 429:
        return "429 shed"
    if status == 200:
        if is_stream and b'"error"' in data and data.rstrip().endswith(b"data: [DONE]"):
            return "200 stream_error"
        return "200"
    try:
        code = json.loads(data)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        code = "?"
    return f"{status} {code}"


@dataclass
class Tally:
    sent: int = 0
    connect_failed: int = 0
    outcomes: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    lock: threading.Lock = field(default_factory=threading.Lock)


def exchange(conn: http.client.HTTPConnection, kind: Kind, body: bytes) -> tuple[str, bool]:
    """Read one answer to a request already written: its outcome, and whether the connection can be reused
    (after an error answer or an exception it is not: the next request starts on a fresh connection, so it is
    never written into a socket the proxy has already closed)."""
    try:
        response = conn.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException) as exc:
        return type(exc).__name__, False
    outcome = outcome_of(response.status, data, b'"stream": true' in body, kind.leak)
    return outcome, outcome == "200" and not response.will_close


def worker(port: int, seed: int, deadline: float, budget: list[int], tally: Tally) -> None:
    rng = random.Random(seed)
    weights = [k.weight for k in KINDS]
    conn: http.client.HTTPConnection | None = None
    while time.monotonic() < deadline:
        with tally.lock:
            if budget[0] <= 0:
                break
            budget[0] -= 1
        kind = rng.choices(KINDS, weights)[0]
        body = kind.body(rng)
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        started = time.perf_counter()
        try:
            conn.request("POST", "/v1/chat/completions", body=body, headers=HEADERS)
        except OSError as exc:  # not connected, or closed before the request was written: the proxy never saw it
            conn.close()
            conn = None
            with tally.lock:
                tally.connect_failed += 1
                tally.outcomes[kind.name]["unsent " + type(exc).__name__] += 1
            time.sleep(0.1)
            continue
        with tally.lock:
            tally.sent += 1
        outcome, keep = exchange(conn, kind, body)
        elapsed = time.perf_counter() - started
        if not keep:
            conn.close()
            conn = None
        with tally.lock:
            tally.outcomes[kind.name][outcome] += 1
            tally.latencies[kind.name].append(elapsed)
    if conn is not None:
        conn.close()


def proc_status(pid: int, key: str) -> int:
    """A /proc/<pid>/status field in KiB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def start_standin(port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([PY, "-m", "proxy.cli", "standin", "--port", str(port)], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc


def wait_http(port: int, path: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"127.0.0.1:{port}{path}")


@dataclass
class Run:
    """What the load phase measured, besides the tally."""

    elapsed: float = 0.0
    down: tuple[float, float] | None = None  # when the stand-in was killed and back, seconds into the run
    rss_kib: list[int] = field(default_factory=list)
    peak_kib: int = 0
    cpu: dict[str, float] = field(default_factory=dict)


def load(args: argparse.Namespace, port: int, proxy_pid: int, up_port: int,
         standin: subprocess.Popen[bytes], tally: Tally) -> tuple[Run, subprocess.Popen[bytes]]:
    """The load phase; returns the run's measurements and the stand-in process alive at its end."""
    run = Run()
    cpu_proxy, cpu_client, cpu_standin = cpu_seconds(proxy_pid), time.process_time(), 0.0
    started = time.monotonic()
    budget = [args.max_requests]
    threads = [threading.Thread(target=worker, args=(port, args.seed + i, started + args.seconds, budget, tally),
                                daemon=True) for i in range(args.concurrency)]
    for t in threads:
        t.start()
    kill_at = started + args.seconds * 0.45 if args.kill else float("inf")
    while any(t.is_alive() for t in threads):
        run.rss_kib.append(proc_status(proxy_pid, "VmRSS"))
        if time.monotonic() >= kill_at:
            kill_at = float("inf")
            cpu_standin += cpu_seconds(standin.pid)
            standin.kill()  # SIGKILL: in-flight streams break, new upstream connections are refused
            standin.wait()
            killed = time.monotonic() - started
            time.sleep(args.down_seconds)
            standin = start_standin(up_port)
            run.down = (killed, time.monotonic() - started)
        time.sleep(0.5)
    run.elapsed = time.monotonic() - started
    run.peak_kib = proc_status(proxy_pid, "VmHWM")  # before SIGTERM: the process is gone after it
    run.cpu = {"proxy": cpu_seconds(proxy_pid) - cpu_proxy, "stand-in": cpu_standin + cpu_seconds(standin.pid),
               "client": time.process_time() - cpu_client}
    return run, standin


def audit_verify(work: Path) -> tuple[int, dict[str, object]]:
    """`warden audit verify --json` on the run's log: exit code and report."""
    done = subprocess.run([PY, "-m", "proxy.cli", "audit", "verify", str(work / "audit"), "--key-dir",
                           str(work / "keys"), "--json"], cwd=REPO, capture_output=True, text=True, check=False)
    try:
        report: dict[str, object] = json.loads(done.stdout)
    except ValueError:
        report = {"outcome": "unreadable", "stderr": done.stderr[-2000:]}
    return done.returncode, report


def print_report(args: argparse.Namespace, run: Run, tally: Tally, code: int, report: dict[str, object]) -> bool:
    """The tables; True when the audit verifies with one exchange record per request sent."""
    served = sum(n for c in tally.outcomes.values() for o, n in c.items() if not o.startswith("unsent"))
    errors: Counter[str] = Counter()
    for k in KINDS:
        for outcome, n in tally.outcomes.get(k.name, Counter()).items():
            if outcome != k.expect:
                errors[outcome] += n
    print(f"\nsoak: {run.elapsed:.0f} s at concurrency {args.concurrency} (seed {args.seed}); " + (
        f"stand-in SIGKILLed at {run.down[0]:.0f} s, back at {run.down[1]:.0f} s" if run.down else "no kill"))
    print(f"requests sent {tally.sent}, answered {served} ({served / run.elapsed:.0f}/s), not sent "
          f"{tally.connect_failed}\n")
    rows: list[tuple[str, ...]] = [("kind (designed outcome)", "sent", "as designed", "p50", "p99", "other outcomes")]
    all_lat: list[float] = []
    for k in KINDS:
        outcomes = tally.outcomes.get(k.name, Counter())
        lat = tally.latencies.get(k.name, [])
        all_lat += lat
        others = ", ".join(f"{o} x{n}" for o, n in outcomes.most_common() if o != k.expect) or "-"
        rows.append((f"{k.name} ({k.expect})", str(sum(outcomes.values())), str(outcomes.get(k.expect, 0)),
                     ms(pct(lat, 0.5)), ms(pct(lat, 0.99)), others))
    rows.append(("all", str(len(all_lat)), str(len(all_lat) - sum(errors.values())), ms(pct(all_lat, 0.5)),
                 ms(pct(all_lat, 0.99)), "-"))
    print_table(rows)
    print("\nerrors by outcome (not what the kind is designed to get):")
    print_table([("outcome", "count"), *((o, str(n)) for o, n in errors.most_common())] if errors
                else [("outcome", "count"), ("none", "0")])
    rss = run.rss_kib
    print(f"\nproxy peak RSS (VmHWM) {run.peak_kib / 1024:.0f} MiB; RSS every 0.5 s: min {min(rss) / 1024:.0f} MiB, "
          f"max {max(rss) / 1024:.0f} MiB, last {rss[-1] / 1024:.0f} MiB")
    cpu = run.cpu
    print("CPU over the load phase: " + ", ".join(f"{name} {sec:.0f} s ({sec / run.elapsed:.2f} cores)"
                                                 for name, sec in cpu.items())
          + f"; {sum(cpu.values()) / run.elapsed:.2f} of {os.cpu_count()} cores in all")
    kinds = report.get("kinds")
    records = int(kinds.get("exchange", 0)) if isinstance(kinds, dict) else 0
    problems = report.get("problems")
    codes = sorted({str(p.get("code")) for p in problems if isinstance(p, dict)}) if isinstance(problems, list) else []
    print(f"audit verify: exit {code}, {report.get('outcome')}, {report.get('records')} records, "
          f"{report.get('checkpoints')} checkpoints, problems: {', '.join(codes) or 'none'}")
    same = records == tally.sent
    print(f"exchange records {records}, requests sent {tally.sent}: {'equal' if same else 'DIFFERENT'}")
    return code == 0 and same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=180.0, help="length of the load phase (default 180)")
    parser.add_argument("--concurrency", type=int, default=16,
                        help="client connections (default 16: where throughput stopped growing, see bench/README.md)")
    parser.add_argument("--max-requests", type=int, default=500_000, help="stop after this many requests")
    parser.add_argument("--down-seconds", type=float, default=5.0, help="how long the stand-in stays dead")
    parser.add_argument("--no-kill", dest="kill", action="store_false",
                        help="leave the stand-in alone (to compare throughput across concurrencies)")
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--semantic", action="store_true",
                        help="keep the semantic stage on (the default configuration; needs `warden models build`)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="warden-soak-"))
    up_port, port, admin_port = free_port(), free_port(), free_port()
    standin = start_standin(up_port)
    command = [PY, "-m", "proxy.cli", "serve", "--upstream", f"http://127.0.0.1:{up_port}",
               "--listen", f"127.0.0.1:{port}", "--admin", f"127.0.0.1:{admin_port}", "--log-level", "error",
               "--audit-dir", str(work / "audit"), "--max-body", str(MAX_BODY),
               "--upstream-timeout", f"{UPSTREAM_TIMEOUT_S}s", *([] if args.semantic else ["--no-semantic"])]
    tally = Tally()
    with open(work / "proxy.log", "wb") as log:
        proxy = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_port(port, 120)
            wait_http(admin_port, "/readyz")
            run, standin = load(args, port, proxy.pid, up_port, standin, tally)
        finally:
            stop(proxy)  # SIGTERM: drains, writes the shutdown record and a last checkpoint
            stop(standin)
    code, report = audit_verify(work)
    ok = print_report(args, run, tally, code, report)
    if not ok:
        print(json.dumps(report, indent=1)[-3000:])
    print(f"(audit log, keys and proxy.log in {work})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
