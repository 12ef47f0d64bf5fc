"""What a sidecar costs: direct to the stand-in, mitmdump, a bare minimal mitmproxy, `warden serve --no-guard`
(pass-through) and `warden serve` with the builtin rule packs, all in one run.

Prints, per configuration: proxy CPU per request, p50/p99 latency and added latency for a 1 KB JSON chat
request at concurrency 1 and 16, and for a 200-event SSE stream the proxy CPU per chunk (the long stream's
CPU minus a one-event stream's, over the 199 events between them) and the added time to first event.
Ratios: against the bare minimal mitmproxy (same addons as Warden, none of our stages), and for the guarded
row also against Warden's own pass-through. Nothing is asserted: it is a report.
Run: .venv/bin/python bench/overhead.py [--quick]
     .venv/bin/python bench/overhead.py --in-process   # seconds: the stream relay alone, no sockets
     .venv/bin/python bench/overhead.py --semantic     # the default configuration: the semantic stage on
     .venv/bin/python bench/overhead.py --multi-turn [--baseline DIR]   # a conversation's prompt-side cost
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = sys.executable
CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(port)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (a Warden drains and exits), then SIGKILL after 15 s."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        proc.kill()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process and its threads, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


PROMPT = ("Summarise the following text in one sentence. " * 22)[:1000]
CHAT_BODY = json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": PROMPT}],
                        "standin": {"reply": "ok", "prefix_cache": False}}).encode()
SSE_REPLY = ("流式输出 stream text 1234 " * 40)[:800]
SSE_BODY = json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": "stream please"}],
                       "stream": True, "standin": {"reply": SSE_REPLY, "chars_per_event": 4,
                                                   "prefix_cache": False}}).encode()
# The same stream with one content event: a long stream's CPU minus a short one's, over the difference in
# events, is the marginal cost of a chunk, free of everything a stream costs once (connection, request
# hooks, audit record, the guard's set-up). Subtracting a plain request's CPU instead, as this bench once did,
# also subtracted the guarded request's 1 KB prompt scan, which a stream request does not have.
SHORT_SSE_BODY = json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": "stream please"}],
                             "stream": True, "standin": {"reply": SSE_REPLY[:4], "chars_per_event": 4,
                                                         "prefix_cache": False}}).encode()
CHUNKS_APART = len(SSE_REPLY) // 4 - 1  # content events in the long stream beyond the short one's
HEADERS = {"Content-Type": "application/json"}
VARIED = "varied"  # key prefix of the side-by-side rounds' streams with a distinct reply each


def varied_bodies(n: int) -> list[bytes]:
    """`n` stream bodies like SSE_BODY whose replies are distinct stretches of SSE_REPLY's length cut from
    the training exemplars and evaluation texts (about 280,000 characters, ~350 stretches), each streamed one
    token per event as a model would, in the semantic model's SentencePiece tokens (XLM-R's vocabulary, from
    the cached build: `warden models build`). Each further pass over the stretches starts 193 characters
    later, so no stream replays an earlier one. SSE_REPLY repeats every 25 characters, so after one stream a
    cache of per-token answers knows all of it; real answers repeat far less."""
    from models import build, categories, evaluate
    from models.tokenizer import Tokenizer

    built = build.find()
    if built is None:
        raise SystemExit("bench/overhead.py: the distinct replies are cut into tokens by the semantic model's "
                         "tokenizer: run `.venv/bin/warden models build` first")
    tokenizer = Tokenizer.from_files(built.path(build.TOKENIZER), built.path(build.NORMALIZATION))
    texts = [e.text for e in categories.exemplars(categories.load_categories(), categories.load_benign())]
    for path in sorted(evaluate.data_path("semantic_eval.jsonl").parent.glob("semantic_eval*.jsonl")):
        texts += [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line.strip()]
    pool = " ".join(texts)
    size = len(SSE_REPLY)
    per_pass = len(pool) // size - 1
    bodies = []
    for k in range(n):
        start = (k % per_pass) * size + (k // per_pass) * 193 % size
        pieces = tokenizer.pieces(pool[start:start + size])
        bodies.append(json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": "stream please"}],
                                  "stream": True, "standin": {"pieces": pieces[:CHUNKS_APART + 1],
                                                              "prefix_cache": False}}).encode())
    return bodies


@dataclass
class Target:
    name: str
    port: int
    proc: subprocess.Popen[bytes] | None

    def cpu(self) -> float:
        return cpu_seconds(self.proc.pid) if self.proc else 0.0


def run_requests(port: int, body: bytes | list[bytes], total: int, concurrency: int,
                 stream: bool, refused: list[int] | None = None) -> tuple[list[float], list[float]]:
    """Send `total` requests over `concurrency` keep-alive connections; returns latencies and first-event times.
    A list of bodies is sent in turn. A status other than 200 raises, unless `refused` collects them."""
    bodies = body if isinstance(body, list) else [body]
    latencies: list[float] = []
    firsts: list[float] = []
    lock = threading.Lock()
    per_thread = total // concurrency

    def worker() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        mine: list[float] = []
        first_times: list[float] = []
        for k in range(per_thread):
            started = time.perf_counter()
            conn.request("POST", "/v1/chat/completions", body=bodies[k % len(bodies)], headers=HEADERS)
            response = conn.getresponse()
            if stream:
                first = None
                while line := response.readline():
                    if first is None and line.startswith(b"data:"):
                        first = time.perf_counter() - started
                first_times.append(first or 0.0)
            else:
                response.read()
            if response.status != 200:
                if refused is None:
                    raise RuntimeError(f"status {response.status}")
                with lock:
                    refused.append(response.status)
            mine.append(time.perf_counter() - started)
        conn.close()
        with lock:
            latencies.extend(mine)
            firsts.extend(first_times)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, firsts


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(target: Target, n: int) -> dict[str, float]:
    result: dict[str, float] = {}
    run_requests(target.port, CHAT_BODY, 100, 4, stream=False)  # warm-up
    for concurrency in (1, 16):
        before = target.cpu()
        lat, _ = run_requests(target.port, CHAT_BODY, n, concurrency, stream=False)
        result[f"cpu_req_c{concurrency}"] = (target.cpu() - before) / len(lat)
        result[f"p50_c{concurrency}"] = statistics.median(lat)
        result[f"p99_c{concurrency}"] = pct(lat, 0.99)
    streams = max(20, n // 20)
    before = target.cpu()
    lat, firsts = run_requests(target.port, SSE_BODY, streams, 1, stream=True)
    middle = target.cpu()
    short = run_requests(target.port, SHORT_SSE_BODY, streams, 1, stream=True)[0]
    result["cpu_stream"] = (middle - before) / len(lat)
    result["cpu_chunk"] = ((middle - before) / len(lat) - (target.cpu() - middle) / len(short)) / CHUNKS_APART
    result["ttfe_p50"] = statistics.median(firsts)
    return result


Launcher = Callable[[str, int], list[str] | None]

CONFIGS: list[tuple[str, Launcher]] = [
    ("direct", lambda up, port: None),
    ("mitmdump (35 addons)", lambda up, port: [str(Path(PY).parent / "mitmdump"), "-q", "--mode",
                                               f"reverse:{up}@127.0.0.1:{port}", "-s",
                                               str(REPO / "bench" / "bare_mitmproxy.py")]),
    ("bare mitmproxy", lambda up, port: [PY, str(REPO / "bench" / "bare_mitmproxy.py"), up, str(port)]),
    ("warden pass-through", lambda up, port: [PY, "-m", "proxy.cli", "serve", "--upstream", up, "--listen",
                                              f"127.0.0.1:{port}", "--admin", f"127.0.0.1:{free_port()}",
                                              "--log-level", "warning", "--no-guard"]),
    ("warden + builtin packs", lambda up, port: [PY, "-m", "proxy.cli", "serve", "--upstream", up, "--listen",
                                                 f"127.0.0.1:{port}", "--admin", f"127.0.0.1:{free_port()}",
                                                 "--log-level", "warning", "--no-semantic"]),
]


def standin_sse(reply: str, per_event: int) -> list[bytes]:
    """The stand-in's chat stream for `reply` (proxy/dev/standin.py's shape): role chunk, content chunks,
    finish chunk, usage chunk, [DONE]; one event per upstream chunk, as the stand-in and vLLM write them."""
    def event(choices: list[dict[str, object]], extra: dict[str, object] | None = None) -> bytes:
        payload = {"id": "chatcmpl-bench", "object": "chat.completion.chunk", "created": 1,
                   "model": "standin-base", "choices": choices, "usage": None, **(extra or {})}
        return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

    out = [event([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])]
    out += [event([{"index": 0, "delta": {"content": reply[i:i + per_event]}, "finish_reason": None}])
            for i in range(0, len(reply), per_event)]
    out.append(event([{"index": 0, "delta": {}, "finish_reason": "stop"}]))
    out.append(event([], {"usage": {"prompt_tokens": 3, "completion_tokens": len(out)}}))
    return [*out, b"data: [DONE]\n\n"]


def in_process(rounds: int = 5, streams: int = 100, per_reads: tuple[int, ...] = (1,)) -> None:
    """CPU per event of the stream callable alone (proxy/stages/stream.py's SseRelay), pass-through and with
    the builtin packs' stream guard, on the same stream as the live table: no sockets, no mitmproxy, so it
    isolates our per-event Python work (the live figure adds mitmproxy's own per-chunk cost, and runs slower
    per operation because the caches are cold between events). Medians of `rounds` alternating rounds.
    `per_reads`: events per upstream read (1: vLLM and the stand-in; more: llama.cpp's server, a busy
    vLLM, which the guard handles as one batch per read)."""
    import hmac

    sys.path.insert(0, str(REPO))
    from proxy.guard.engine import compile_policy
    from proxy.guard.stream import StreamGuard
    from proxy.stages.stream import SseRelay
    from proxy.state import FlowState, Route
    from rules.pseudonym import PseudonymVault
    from rules.stream import StreamScanner

    policy = compile_policy([])
    chunks = standin_sse(SSE_REPLY, 4)

    def stream(guarded: bool, per_read: int) -> None:
        guard = StreamGuard(policy.response, PseudonymVault(), Route.CHAT, 400) if guarded else None
        relay = SseRelay(FlowState("bench", Route.CHAT, 0.0), time.perf_counter, guard,
                         hmac.new(b"k", digestmod="sha256"))
        reads = chunks if per_read == 1 else [b"".join(chunks[i:i + per_read])
                                               for i in range(0, len(chunks), per_read)]
        for chunk in [*reads, b""]:
            for _ in relay(chunk):
                pass

    def scanner_only() -> None:
        scanner = StreamScanner(policy.response)
        for i in range(0, len(SSE_REPLY), 4):
            scanner.feed(SSE_REPLY[i:i + 4])
        scanner.flush()

    def per_event(fn: Callable[[], None]) -> float:
        fn()
        started = time.process_time()
        for _ in range(streams):
            fn()
        return (time.process_time() - started) / streams / len(chunks)

    plain: dict[int, list[float]] = {n: [] for n in per_reads}
    guarded: dict[int, list[float]] = {n: [] for n in per_reads}
    scan: list[float] = []
    for _ in range(rounds):
        for n in per_reads:
            plain[n].append(per_event(lambda: stream(False, n)))  # noqa: B023 (called at once)
            guarded[n].append(per_event(lambda: stream(True, n)))  # noqa: B023
        scan.append(per_event(scanner_only))
    us = 1_000_000.0
    print(f"\nin-process, {len(chunks)} events of {len(SSE_REPLY) // 200} characters, CPU per event "
          f"(median of {rounds} rounds of {streams} streams)\n")
    rows: list[tuple[str, ...]] = [("path", "events per read", "CPU per event", "added")]
    for n in per_reads:
        p, g = statistics.median(plain[n]) * us, statistics.median(guarded[n]) * us
        rows += [("SseRelay pass-through", str(n), f"{p:.1f} us", "-"),
                 ("SseRelay + stream guard (builtin packs)", str(n), f"{g:.1f} us", f"+{g - p:.1f} us")]
    rows.append(("StreamScanner.feed alone, one delta per feed", "-", f"{statistics.median(scan) * us:.1f} us", "-"))
    print_table(rows)


SEMANTIC_ON, SEMANTIC_OFF = "warden defaults (semantic on)", "warden + builtin packs (--no-semantic)"


def benign_prompts(n: int, seed: int = 20261202) -> list[bytes]:
    """`n` distinct ~1 KB chat bodies of plain benign prompts, each made of one language's benign texts of the
    held-out evaluation sets (never trained on) in a seeded random order: the semantic stage judges unseen
    text, and a repeated prompt would be answered from its cache."""
    import random

    from models import evaluate

    items = [json.loads(line) for path in evaluate.default_eval_paths()
             for line in path.read_text("utf-8").splitlines() if line.strip()]
    rng = random.Random(seed)
    bodies = []
    for k in range(n):
        lang = "zh" if k % 2 else "en"
        pool = [it["text"] for it in items if it["type"] == "benign" and it["lang"] == lang]
        parts: list[str] = []
        while len(" ".join(parts).encode()) < 1000:
            parts.append(rng.choice(pool))
        prompt = (" " if lang == "en" else "").join(parts)
        bodies.append(json.dumps({"model": "standin-base", "messages": [{"role": "user", "content": prompt}],
                                  "standin": {"reply": "ok", "prefix_cache": False}}).encode())
    return bodies


def semantic_cost(rounds: int, per_round: int) -> None:
    """The default configuration against the same without the semantic stage, side by side in alternating
    rounds: p50/p99 latency and proxy CPU for distinct benign ~1 KB prompts at c=1 (every prompt waits for
    its verdict before it is forwarded; a refused one, answered by Warden itself, counts in the latencies
    and in the `refused` column), and CPU per chunk of streams with a distinct reply each (the answer's
    windows are judged off the event loop while the stream flows; a stream blocked on the way counts its
    chunks as if it had run to the end)."""
    up_port = free_port()
    standin = subprocess.Popen([PY, "-m", "proxy.cli", "standin", "--port", str(up_port)], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs: dict[str, Target] = {}
    try:
        wait_port(up_port)
        upstream = f"http://127.0.0.1:{up_port}"
        for name, extra in ((SEMANTIC_ON, []), (SEMANTIC_OFF, ["--no-semantic"])):
            port = free_port()
            command = [PY, "-m", "proxy.cli", "serve", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
                       "--admin", f"127.0.0.1:{free_port()}", "--log-level", "warning", *extra]
            procs[name] = Target(name, port, subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL,
                                                              stderr=subprocess.DEVNULL))
        for target in procs.values():
            wait_port(target.port, timeout=120)  # the model loads (and builds, the first time) at start
            run_requests(target.port, benign_prompts(20, seed=1), 20, 1, stream=False, refused=[])  # warm-up
        prompts = benign_prompts(rounds * per_round)
        replies = varied_bodies(rounds * 10)
        lat: dict[str, list[float]] = {name: [] for name in procs}
        cpu: dict[str, list[float]] = {name: [] for name in procs}
        refused: dict[str, list[int]] = {name: [] for name in procs}
        chunk: dict[str, list[float]] = {name: [] for name in procs}
        for r in range(rounds):
            names = list(procs) if r % 2 == 0 else list(procs)[::-1]
            for name in names:
                target = procs[name]
                before = target.cpu()
                got, _ = run_requests(target.port, prompts[r * per_round:(r + 1) * per_round], per_round, 1,
                                      stream=False, refused=refused[name])
                cpu[name].append((target.cpu() - before) / per_round)
                lat[name] += got
                before = target.cpu()
                run_requests(target.port, SHORT_SSE_BODY, 10, 1, stream=True)
                middle = target.cpu()
                run_requests(target.port, replies[r * 10:(r + 1) * 10], 10, 1, stream=True, refused=[])
                chunk[name].append(((target.cpu() - middle) - (middle - before)) / 10 / CHUNKS_APART)
    finally:
        for target in procs.values():
            assert target.proc is not None
            stop(target.proc)
        standin.terminate()
    ms, us = 1000.0, 1_000_000.0
    print(f"\n{rounds} alternating rounds of {per_round} distinct benign ~1 KB prompts (c=1) and 10 streams with a "
          f"distinct reply each\n")
    rows: list[tuple[str, ...]] = [("config", "p50", "p90", "p99", "CPU/req", "refused",
                                    "CPU/chunk (distinct replies)")]
    for name in (SEMANTIC_OFF, SEMANTIC_ON):
        rows.append((name, f"{statistics.median(lat[name]) * ms:.2f} ms", f"{pct(lat[name], 0.9) * ms:.2f} ms",
                     f"{pct(lat[name], 0.99) * ms:.2f} ms", f"{statistics.median(cpu[name]) * ms:.2f} ms",
                     f"{len(refused[name])} of {len(lat[name])}", f"{statistics.median(chunk[name]) * us:.0f} us"))
    print_table(rows)
    added = (statistics.median(lat[SEMANTIC_ON]) - statistics.median(lat[SEMANTIC_OFF])) * ms
    print(f"\nthe semantic stage adds {added:+.2f} ms to the p50 of a benign 1 KB prompt")


PAGE = ("The quarterly report shows revenue up 12% year on year, driven by subscriptions in Asia. 季度报告显示"
        "收入同比增长百分之十二，主要来自亚洲的订阅业务。Operating costs rose 4%; headcount stayed flat. ") * 8
MULTI_TURN_BODY = json.dumps({"model": "standin-base", "standin": {"reply": "ok", "prefix_cache": False},
                              "messages": [
    {"role": "system", "content": "You are a research assistant. Cite the tool results you use. " * 4},
    {"role": "user", "content": "Find last quarter's report and summarise the revenue figures for me."},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": "search", "arguments": json.dumps({"query": "quarterly report revenue", "top_k": 3})}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": PAGE},
    {"role": "assistant", "content": "Revenue rose 12% year on year, mostly from subscriptions in Asia. " * 3},
    {"role": "user", "content": [{"type": "text", "text": "And costs? Here is the appendix I have:"},
                                 {"type": "text", "text": PAGE[:1500]}]},
    {"role": "assistant", "content": "Operating costs rose 4% while headcount stayed flat. " * 3},
    {"role": "user", "content": "Thanks. Write a three-line summary for the board, in English and Chinese."},
]}).encode()


def multi_turn_cost(rounds: int, per_round: int, baseline: Path | None) -> None:
    """A conversation's prompt-side cost (issue 23): every message of the history, tool output and content parts
    is judged with its role. Proxy CPU per request for the 1 KB single-turn prompt and for an 8-message
    conversation (~6 KB of text: system, user turns, a tool call and its ~2.4 KB result, earlier answers, a
    pasted appendix) against `warden serve --no-guard`, with decoding (the default) and without
    (`normalize: {decode: false}`), and, given `--baseline DIR` (a source tree of an earlier commit, e.g.
    `git archive <commit> | tar -x -C DIR`), that tree's `warden serve` with its builtin packs. The processes
    take turns in ABBA rounds; medians of the per-round CPU per request."""
    import tempfile

    up_port = free_port()
    standin = subprocess.Popen([PY, "-m", "proxy.cli", "standin", "--port", str(up_port)], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    procs: dict[str, Target] = {}
    tmp = tempfile.TemporaryDirectory()
    decode_off = Path(tmp.name) / "decode-off.yaml"
    decode_off.write_text("version: 1\nnormalize: {decode: false}\n", "utf-8")
    configs: list[tuple[str, Path, list[str]]] = [
        ("pass-through", REPO, ["--no-guard"]),
        ("guarded, decoding off", REPO, ["--no-semantic", "--rules", str(decode_off)]),
        ("guarded (default)", REPO, ["--no-semantic"]),
    ]
    if baseline is not None:
        configs.append((f"guarded, {baseline.name}", baseline, ["--no-semantic"]))
    bodies = {"1 KB single turn": CHAT_BODY, "8-message conversation": MULTI_TURN_BODY}
    cpu: dict[tuple[str, str], list[float]] = {}
    try:
        wait_port(up_port)
        upstream = f"http://127.0.0.1:{up_port}"
        for name, tree, extra in configs:
            port = free_port()
            command = [PY, "-m", "proxy.cli", "serve", "--upstream", upstream, "--listen", f"127.0.0.1:{port}",
                       "--admin", f"127.0.0.1:{free_port()}", "--log-level", "warning", *extra]
            env = {**os.environ, "PYTHONPATH": str(tree)}
            procs[name] = Target(name, port, subprocess.Popen(command, cwd=tree, env=env,
                                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for target in procs.values():
            wait_port(target.port, timeout=60)
            for body in bodies.values():
                run_requests(target.port, body, 50, 1, stream=False)  # warm-up
        for r in range(rounds):
            names = list(procs) if r % 2 == 0 else list(procs)[::-1]
            for name in names:
                target = procs[name]
                for label, body in bodies.items():
                    before = target.cpu()
                    run_requests(target.port, body, per_round, 1, stream=False)
                    cpu.setdefault((name, label), []).append((target.cpu() - before) / per_round)
    finally:
        for target in procs.values():
            assert target.proc is not None
            stop(target.proc)
        standin.terminate()
        tmp.cleanup()
    ms = 1000.0
    print(f"\n{rounds} alternating rounds of {per_round} requests per body (c=1); proxy CPU per request, median "
          "(min-max) over rounds\n")
    rows: list[tuple[str, ...]] = [("config", *bodies, *(f"guard's share, {b}" for b in bodies))]
    for name in procs:
        cells = []
        for label in bodies:
            v = cpu[(name, label)]
            cells.append(f"{statistics.median(v) * ms:.2f} ms ({min(v) * ms:.2f}-{max(v) * ms:.2f})")
        shares = [f"{(statistics.median(cpu[(name, b)]) - statistics.median(cpu[('pass-through', b)])) * ms:+.2f} ms"
                  for b in bodies]
        rows.append((name, *cells, *shares))
    print_table(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer requests (a smoke run)")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--ab-rounds", type=int, default=9, help="side-by-side rounds (the per-chunk verdict): "
                        "one round's ratio can stray by 30-50%% on a shared machine, the pooled one far less")
    parser.add_argument("--in-process", action="store_true", help="only the stream relay's CPU per event, "
                        "in this process (seconds)")
    parser.add_argument("--per-read", type=int, nargs="+", default=[1, 8, 32], metavar="N",
                        help="with --in-process: events per upstream read, one row pair each (default 1 8 32)")
    parser.add_argument("--semantic", action="store_true", help="only the semantic stage's cost: the default "
                        "configuration against --no-semantic, side by side (~2 min)")
    parser.add_argument("--multi-turn", action="store_true", help="only the prompt-side cost of a conversation "
                        "(every message judged with its role), with and without decoding (issue 23)")
    parser.add_argument("--baseline", type=Path, help="with --multi-turn: a source tree of an earlier commit to "
                        "compare against")
    args = parser.parse_args()
    if args.multi_turn:
        multi_turn_cost(rounds=4 if args.quick else 10, per_round=50 if args.quick else 200, baseline=args.baseline)
        return
    if args.in_process:
        in_process(per_reads=tuple(args.per_read))
        return
    if args.semantic:
        semantic_cost(rounds=6 if args.quick else 12, per_round=25 if args.quick else 50)
        return
    n = 320 if args.quick else args.requests
    up_port = free_port()
    standin = subprocess.Popen([PY, "-m", "proxy.cli", "standin", "--port", str(up_port)], cwd=REPO,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(up_port)
    upstream = f"http://127.0.0.1:{up_port}"
    results: dict[str, dict[str, float]] = {}
    try:
        for name, launch in CONFIGS:
            port = up_port
            proc = None
            command = launch(upstream, port := free_port())
            if command is None:
                port = up_port
            else:
                proc = subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                wait_port(port)
                time.sleep(0.5)
            try:
                results[name] = measure(Target(name, port, proc), n)
            finally:
                if proc:
                    stop(proc)
            print(f"measured {name}", file=sys.stderr)
        ab = ab_rounds(upstream, rounds=5 if args.quick else args.ab_rounds, streams=20 if args.quick else 40)
    finally:
        standin.terminate()
    report(results, n)
    report_ab(ab)


PASS, GUARDED, CONTROL = "warden pass-through", "warden + builtin packs", "warden pass-through (control)"


def ab_rounds(upstream: str, rounds: int, streams: int) -> dict[str, list[float]]:
    """Warden pass-through and guarded running side by side, measured in alternating rounds (ABBA order):
    the shared machine's load then weighs on both alike, where the sequential rows above can differ by 30%.
    A third process, a second pass-through (the control), runs in the same rounds: two identical processes
    differ per chunk by several percent (memory layout, hash seeds, which core), and its ratio to the first
    is this run's noise floor. Per round and process: CPU per chunk as in the table, (long stream CPU -
    short stream CPU) / CHUNKS_APART; and every long stream's time to first event."""
    names = (PASS, GUARDED, CONTROL)
    launchers = dict(CONFIGS)
    launchers[CONTROL] = launchers[PASS]
    procs: dict[str, Target] = {}
    try:
        for name in names:
            port = free_port()
            command = launchers[name](upstream, port)
            assert command is not None
            procs[name] = Target(name, port, subprocess.Popen(command, cwd=REPO, stdout=subprocess.DEVNULL,
                                                              stderr=subprocess.DEVNULL))
        for target in procs.values():
            wait_port(target.port)
            run_requests(target.port, CHAT_BODY, 100, 4, stream=False)  # warm-up
            run_requests(target.port, SSE_BODY, 10, 1, stream=True)
        chunk: dict[str, list[float]] = {name: [] for name in names}
        chunk.update({f"ttfe {name}": [] for name in names})
        chunk.update({f"{VARIED} {name}": [] for name in names})
        bodies = varied_bodies(rounds * streams)
        for r in range(rounds):
            for name in names if r % 2 == 0 else names[::-1]:
                target = procs[name]
                before = target.cpu()
                run_requests(target.port, SHORT_SSE_BODY, streams, 1, stream=True)
                middle = target.cpu()
                firsts = run_requests(target.port, SSE_BODY, streams, 1, stream=True)[1]
                per_short = (middle - before) / streams
                long_end = target.cpu()
                chunk[name].append(((long_end - middle) / streams - per_short) / CHUNKS_APART)
                chunk[f"ttfe {name}"] += firsts
                run_requests(target.port, bodies[r * streams:(r + 1) * streams], streams, 1, stream=True)
                chunk[f"{VARIED} {name}"].append(((target.cpu() - long_end) / streams - per_short) / CHUNKS_APART)
        return chunk
    finally:
        for target in procs.values():
            assert target.proc is not None
            stop(target.proc)


def report_ab(chunk: dict[str, list[float]]) -> None:
    plain, guarded, control = chunk[PASS], chunk[GUARDED], chunk[CONTROL]
    us, ms = 1_000_000.0, 1000.0

    def ratios(of: list[float], base: list[float] = plain) -> str:
        per_round = [g / p for p, g in zip(base, of, strict=True) if p > 0]
        if not per_round:
            return "-"
        pooled = statistics.fmean(of) / statistics.fmean(base)  # every round sends the same streams
        return (f"{statistics.median(per_round):.2f}x median, {pooled:.2f}x pooled "
                f"({min(per_round):.2f}-{max(per_round):.2f})")

    ttfe = {name: statistics.median(chunk[f"ttfe {name}"]) for name in (PASS, GUARDED, CONTROL)}
    varied = {name: chunk[f"{VARIED} {name}"] for name in (PASS, GUARDED, CONTROL)}
    print(f"\nthe Warden processes side by side, {len(plain)} alternating rounds (medians):")
    print_table([
        ("measure", "pass-through", "guarded", "guarded / pass-through", "control / pass-through", "target"),
        ("CPU per chunk", f"{statistics.median(plain) * us:.0f} us", f"{statistics.median(guarded) * us:.0f} us",
         ratios(guarded), ratios(control), "< 1.5x"),
        ("CPU per chunk, a distinct reply per stream", f"{statistics.median(varied[PASS]) * us:.0f} us",
         f"{statistics.median(varied[GUARDED]) * us:.0f} us", ratios(varied[GUARDED], varied[PASS]),
         ratios(varied[CONTROL], varied[PASS]), "-"),
        ("time to first event", f"{ttfe[PASS] * ms:.2f} ms", f"{ttfe[GUARDED] * ms:.2f} ms",
         f"{(ttfe[GUARDED] - ttfe[PASS]) * ms:+.2f} ms", f"{(ttfe[CONTROL] - ttfe[PASS]) * ms:+.2f} ms", "< +1 ms"),
    ])


def report(results: dict[str, dict[str, float]], n: int) -> None:
    direct, bare = results["direct"], results["bare mitmproxy"]
    ms, us = 1000.0, 1_000_000.0
    print(f"\n{n} chat requests (1 KB prompt) at c=1 and c=16; {max(20, n // 20)} streams of 200 SSE events\n")
    head = ("config", "CPU/req c1", "CPU/req c16", "p50 c1", "p99 c1", "added p50 c1", "p50 c16", "p99 c16",
            "CPU/chunk", "TTFE p50", "added TTFE", "x bare CPU/req", "x bare CPU/chunk")
    rows: list[tuple[str, ...]] = [head]
    bare_chunk = bare["cpu_chunk"]
    for name, r in results.items():
        chunk = r["cpu_chunk"]
        proxied = name != "direct"
        rows.append((
            name,
            f"{r['cpu_req_c1'] * ms:.2f} ms" if proxied else "-",
            f"{r['cpu_req_c16'] * ms:.2f} ms" if proxied else "-",
            f"{r['p50_c1'] * ms:.2f} ms", f"{r['p99_c1'] * ms:.2f} ms",
            f"{(r['p50_c1'] - direct['p50_c1']) * ms:+.2f} ms",
            f"{r['p50_c16'] * ms:.2f} ms", f"{r['p99_c16'] * ms:.2f} ms",
            f"{chunk * us:.0f} us" if proxied else "-",
            f"{r['ttfe_p50'] * ms:.2f} ms", f"{(r['ttfe_p50'] - direct['ttfe_p50']) * ms:+.2f} ms",
            f"{r['cpu_req_c1'] / bare['cpu_req_c1']:.2f}x" if proxied else "-",
            f"{chunk / bare_chunk:.2f}x" if proxied and bare_chunk > 0 else "-",
        ))
    print_table(rows)
    if "warden pass-through" in results and "warden + builtin packs" in results:
        plain, guarded = results["warden pass-through"], results["warden + builtin packs"]
        plain_chunk, guarded_chunk = plain["cpu_chunk"], guarded["cpu_chunk"]
        print("\nguard cost (builtin packs vs Warden pass-through, same run):")
        print_table([
            ("measure", "pass-through", "guarded", "added / ratio", "target"),
            ("p50 latency, 1 KB prompt, c=1", f"{plain['p50_c1'] * ms:.2f} ms", f"{guarded['p50_c1'] * ms:.2f} ms",
             f"{(guarded['p50_c1'] - plain['p50_c1']) * ms:+.2f} ms", "< +1 ms"),
            ("time to first event, 200-event stream", f"{plain['ttfe_p50'] * ms:.2f} ms",
             f"{guarded['ttfe_p50'] * ms:.2f} ms", f"{(guarded['ttfe_p50'] - plain['ttfe_p50']) * ms:+.2f} ms",
             "< +1 ms"),
            ("CPU per chunk", f"{plain_chunk * us:.0f} us", f"{guarded_chunk * us:.0f} us",
             f"{guarded_chunk / plain_chunk:.2f}x" if plain_chunk > 0 else "-", "< 1.5x"),
            ("CPU per request, c=1", f"{plain['cpu_req_c1'] * ms:.2f} ms", f"{guarded['cpu_req_c1'] * ms:.2f} ms",
             f"{guarded['cpu_req_c1'] / plain['cpu_req_c1']:.2f}x", "-"),
        ])


def print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for i, row in enumerate(rows):
        cells = zip(row, widths, strict=True)
        print("  ".join(cell.rjust(w) if j else cell.ljust(w) for j, (cell, w) in enumerate(cells)))
        if i == 0:
            print("  ".join("-" * w for w in widths))


if __name__ == "__main__":
    main()
