"""Audit log speed: group-commit append throughput, verify throughput, anchor lag under load.

    .venv/bin/python -m bench.audit [--records 100000] [--lag-seconds 15] [--lag-rate 2000]

Wall-clock rates depend on the machine's load; the rec/CPU-s columns (process CPU time, all threads) less so.

1. Append: one thread appends `--records` realistic exchange records (~540-byte lines: ids, digests, verdicts,
   finding counts) to a fresh log in a temp directory with real fdatasync group commit, then waits until the
   last one is durable. Reported: records/s end to end, the caller's cost per `append()` (p50/p99 wall), the
   number of fsync batches. Then the same with 4 appending threads.
2. Verify: the full verifier over that log (signatures, roots, consistency proofs, segment hashes, sequence,
   with and without the chain key for per-record MACs; and --strict, which re-parses every record).
3. Anchor lag: records appended at `--lag-rate`/s for `--lag-seconds`, sampling `anchor_lag_seconds()` (the
   metric the proxy exports) every 50 ms; p50/p99/max, for the default 5 s checkpoint interval and for 1 s.

Targets (printed, not asserted): >= 20,000 appends/s, >= 100,000 verified records/s, anchor lag p99 <= 5 s
(aim 1 s). Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from audit.keys import LocalKeyProvider, Unwrapper
from audit.log import AuditConfig, AuditLog, Origin
from audit.records import ExchangeRecord
from audit.signers import KeyRing
from audit.stores import DirectorySource
from audit.verify import Outcome, verify


def body(log: AuditLog, i: int) -> dict[str, object]:
    return ExchangeRecord(
        request_id=f"req-{i:010d}", route="chat", status=200, latency_ms=120 + i % 50,
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736", model="qwen2-7b-instruct", lora_adapter="support-v3",
        lora_sha256="9f" * 32, input_tokens=812, output_tokens=233, cached_tokens=512,
        input_digest=log.digest(b"prompt %d" % i), output_digest=log.digest(b"answer %d" % i), outcome="ok",
        verdicts={"pii": "mask", "words": "pass", "patterns": "pass", "semantic": "skipped"},
        findings={"cn_mobile": 1, "email": 1}).to_body()


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_append(root: Path, records: int, threads: int) -> tuple[Path, dict[str, float]]:
    directory = root / f"log-{threads}"
    log = AuditLog.open(AuditConfig(directory=directory, origin=Origin("bench", "ns", "pod", f"t{threads}"),
                                    key_dir=root / "keys"))
    bodies = [body(log, i) for i in range(records)]  # built up front: measure the log, not the proxy
    per_thread = records // threads
    costs: list[float] = []
    lock = threading.Lock()

    def worker(k: int) -> None:
        mine = []
        last = None
        clock = time.perf_counter
        for b in bodies[k * per_thread:(k + 1) * per_thread]:
            t0 = clock()
            last = log.append("exchange", b)
            mine.append(clock() - t0)
        if last is not None:
            last.wait(60)
        with lock:
            costs.extend(mine)

    start = time.perf_counter()
    cpu = time.process_time()
    workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    log.flush(60)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    stats = log.stats()
    log.close(30)
    return directory, {"rate": per_thread * threads / elapsed, "cpu_rate": per_thread * threads / cpu,
                       "p50_us": pct(costs, 0.5) * 1e6,
                       "p99_us": pct(costs, 0.99) * 1e6, "batches": stats.batches_total,
                       "per_batch": per_thread * threads / max(1, stats.batches_total)}


def bench_verify(directory: Path, keys: Path, *, mac: bool, strict: bool) -> tuple[float, float, int, str]:
    ring = KeyRing()
    ring.add_bytes((keys / "signing.pub.pem").read_bytes())
    unwrapper = Unwrapper([LocalKeyProvider.from_file(keys / "chain.key")] if mac else [])
    start = time.perf_counter()
    cpu = time.process_time()
    report = verify(DirectorySource(directory), ring, unwrapper, strict=strict)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    outcome = str(report.outcome)
    if report.outcome != Outcome.VALID:  # a bench that measured a broken log must say so, and why
        outcome += " " + ",".join(report.codes())
    return report.records / elapsed, report.records / cpu, report.records, outcome


def bench_lag(root: Path, interval: float, seconds: float, rate: int) -> dict[str, float]:
    directory = root / f"lag-{interval}"
    log = AuditLog.open(AuditConfig(directory=directory, origin=Origin("bench", "ns", "pod", "lag"),
                                    key_dir=root / "keys", checkpoint_interval=interval))
    samples: list[float] = []
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(0.05):
            samples.append(log.anchor_lag_seconds())

    thread = threading.Thread(target=sampler)
    thread.start()
    template = body(log, 0)
    start = time.perf_counter()
    sent = 0
    while (now := time.perf_counter() - start) < seconds:
        due = int(now * rate)
        while sent < due:
            log.append("exchange", template)
            sent += 1
        time.sleep(0.002)
    stop.set()
    thread.join()
    checkpoints = log.stats().checkpoints_total
    log.close(30)
    return {"p50": pct(samples, 0.5), "p99": pct(samples, 0.99), "max": max(samples, default=0.0),
            "mean": statistics.fmean(samples) if samples else 0.0, "checkpoints": checkpoints, "sent": sent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--lag-seconds", type=float, default=15.0)
    parser.add_argument("--lag-rate", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="warden-bench-audit-") as tmp:
        root = Path(tmp)
        print(f"audit bench: {args.records:,} records, lines ~540 bytes, fdatasync group commit, {root}")
        print()
        print(f"{'append (group commit)':<34}{'records/s':>12}{'rec/CPU-s':>12}{'append p50':>12}"
              f"{'append p99':>12}{'fsyncs':>9}{'rec/fsync':>11}")
        directory = root
        for threads in (1, 4):
            path, row = bench_append(root, args.records, threads)
            if threads == 1:
                directory = path
            print(f"{f'{threads} thread(s)':<34}{row['rate']:>12,.0f}{row['cpu_rate']:>12,.0f}"
                  f"{row['p50_us']:>10.1f}us"
                  f"{row['p99_us']:>10.1f}us{row['batches']:>9.0f}{row['per_batch']:>11.0f}")
        print(f"{'target':<34}{'>= 20,000':>12}")
        print()
        print(f"{'verify':<34}{'records/s':>12}{'rec/CPU-s':>12}{'records':>12}{'outcome':>12}")
        for label, mac, strict in (("signatures + roots + MACs", True, False),
                                   ("signatures + roots (public key)", False, False),
                                   ("--strict (re-parse every record)", True, True)):
            rate, cpu_rate, count, outcome = bench_verify(directory, root / "keys", mac=mac, strict=strict)
            print(f"{label:<34}{rate:>12,.0f}{cpu_rate:>12,.0f}{count:>12,}{outcome:>12}")
        print(f"{'target':<34}{'>= 100,000':>12}")
        print()
        print(f"{'anchor lag at ' + str(args.lag_rate) + ' rec/s':<34}{'p50 s':>9}{'p99 s':>9}{'max s':>9}"
              f"{'checkpoints':>13}")
        for interval in (5.0, 1.0):
            row = bench_lag(root, interval, args.lag_seconds, args.lag_rate)
            print(f"{f'checkpoint interval {interval:g} s':<34}{row['p50']:>9.2f}{row['p99']:>9.2f}"
                  f"{row['max']:>9.2f}{row['checkpoints']:>13.0f}")
        print(f"{'target':<34}{'':>9}{'<= 5 (aim 1)':>9}")


if __name__ == "__main__":
    main()
