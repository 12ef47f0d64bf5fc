"""A fleet's audit logs verified in parallel against one at a time.

    .venv/bin/python -m bench.audit_fleet [--logs 8] [--records 20000] [--jobs 2] [--rounds 3] [--s3 2000]
                                          [--dir DIR]

Writes `--logs` logs with the real writer (one checkpoint every 2,000 records, records like bench.audit's, no
fsync: only the verifier is measured), then verifies all of them as `warden audit verify DIR` does for a
directory of logs (`audit.fleet.verify_fleet`: signatures, roots, consistency proofs, segment hashes, every
record MAC with the chain key), one at a time and with `--jobs` workers: processes started by fork (what the
CLI uses), by spawn, and threads. With `--s3 N` a second fleet of logs of N records is uploaded to a moto S3
server started as a subprocess on loopback and verified from there (kept small: moto's server grew to ~10 GB
of RSS verifying 8 logs of 20,000 records three times in each mode). Rounds alternate the modes; the median
wall time and CPU time (this process and its workers) of each is printed, and the speed-up: one at a time's
wall time over the mode's. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from audit.fleet import Discovery, Trust, discover_directory, discover_s3, verify_fleet
from audit.log import AuditConfig, AuditLog, Origin
from bench.audit import body

CHECKPOINT_EVERY = 2000
MODES: dict[str, tuple[str, str | None]] = {  # name: (executor, process start method)
    "one at a time": ("serial", None),
    "processes (fork)": ("process", "fork"),
    "processes (spawn)": ("process", "spawn"),
    "threads": ("thread", None),
}


def write_fleet(root: Path, logs: int, records: int) -> tuple[Path, Path]:
    fleet, keys = root / f"fleet-{records}", root / "keys"
    for n in range(logs):
        if (fleet / f"c1/ns/pod-{n}/checkpoints").is_dir():
            continue  # kept from an earlier run (--dir)
        log = AuditLog.open(AuditConfig(directory=fleet / f"c1/ns/pod-{n}", key_dir=keys, fsync=False,
                                        origin=Origin("bench", "ns", f"pod-{n}", "b0"),
                                        checkpoint_interval=3600.0, heartbeat_interval=3600.0))
        for i in range(records):
            log.append("exchange", body(log, i))
            if (i + 1) % CHECKPOINT_EVERY == 0:
                assert log.checkpoint_now(60)
        assert log.close(60)
    return fleet, keys


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_moto() -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return server, url
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("moto server did not start")


def upload(fleet: Path, url: str) -> str:
    from audit.stores import s3_client

    s3 = s3_client(url)
    s3.create_bucket(Bucket="bench-fleet", ObjectLockEnabledForBucket=True)
    for path in sorted(p for p in fleet.rglob("*") if p.is_file()):
        s3.put_object(Bucket="bench-fleet", Key=f"fleet/{path.relative_to(fleet).as_posix()}", Body=path.read_bytes())
    return "s3://bench-fleet/fleet/"


def cpu_seconds() -> float:
    """This process's CPU and that of its waited-for children (the pool's workers, joined at its shutdown)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(discovery: Discovery, trust: Trust, jobs: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Per mode, (wall s, CPU s) of each round."""
    times: dict[str, list[tuple[float, float]]] = {mode: [] for mode in MODES}
    for _ in range(rounds):
        for mode, (executor, method) in MODES.items():
            cpu, started = cpu_seconds(), time.perf_counter()
            report = verify_fleet(discovery, trust, jobs=1 if executor == "serial" else jobs,
                                  executor=executor, start_method=method)  # type: ignore[arg-type]
            times[mode].append((time.perf_counter() - started, cpu_seconds() - cpu))
            bad = [r.ref.name for r in report.results if r.status != "valid"]
            assert not bad, bad
    return times


def table(title: str, times: dict[str, list[tuple[float, float]]], logs: int, records: int, jobs: int) -> None:
    base = statistics.median(wall for wall, _cpu in times["one at a time"])
    load = os.getloadavg()[0]
    print(f"\n{title}: {logs} logs x {records:,} records, {jobs} workers, {os.cpu_count()} CPUs, "
          f"load average {load:.1f}, median of {len(times[next(iter(times))])} rounds")
    best = min(wall for wall, _cpu in times["one at a time"])
    print(f"{'mode':<20}{'wall s':>9}{'CPU s':>8}{'records/s':>12}{'speed-up':>10}{'best wall s':>13}"
          f"{'best speed-up':>15}")
    for mode, values in times.items():
        wall = statistics.median(w for w, _c in values)
        cpu = statistics.median(c for _w, c in values)
        low = min(w for w, _c in values)  # the least disturbed round, on a shared machine
        print(f"{mode:<20}{wall:>9.2f}{cpu:>8.2f}{logs * records / wall:>12,.0f}{base / wall:>9.2f}x"
              f"{low:>13.2f}{best / low:>14.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logs", type=int, default=8)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--s3", type=int, default=0, metavar="RECORDS",
                        help="also verify logs of this many records each from a moto S3 server")
    parser.add_argument("--dir", type=Path, help="write the logs here and keep them for the next run")
    args = parser.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="warden-bench-fleet-"))
    try:
        started = time.perf_counter()
        fleet, keys = write_fleet(root, args.logs, args.records)
        print(f"{args.logs} logs of {args.records:,} records ready in {time.perf_counter() - started:.1f} s "
              f"(in {fleet})")
        trust = Trust(public_keys=((keys / "signing.pub.pem").read_bytes(),), key_files=(str(keys / "chain.key"),))
        table("directory", measure(discover_directory(fleet), trust, args.jobs, args.rounds), args.logs,
              args.records, args.jobs)
        if args.s3:
            small, _keys = write_fleet(root, args.logs, args.s3)
            server, url = start_moto()
            try:
                os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
                os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
                target = upload(small, url)
                discovery = discover_s3(target, endpoint_url=url)
                table("moto S3 on loopback (the server shares the cores)",
                      measure(discovery, trust, args.jobs, args.rounds), args.logs, args.s3, args.jobs)
            finally:
                server.terminate()
                server.wait(10)
    finally:
        if args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
