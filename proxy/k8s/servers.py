"""Which model server a container runs, and how to move it to 127.0.0.1:I with certainty (issue 25).

Each server's flags and environment variables, as its own source reads them:
- vLLM (`vllm serve`, `python -m vllm.entrypoints.openai.api_server`): argparse `--port` (default 8000) and
  `--host` (vllm/entrypoints/openai/cli_args.py `FrontendArgs`; `--uds` makes it ignore both: refused); no
  environment variable names the API server's port.
- SGLang (`python -m sglang.launch_server`): argparse `--port` (default 30000), `--host`
  (python/sglang/srt/server_args.py `add_cli_args`); no environment variable.
- TGI (`text-generation-launcher`): clap `--port`/`-p` with `env` (PORT, default 3000; the official image sets
  PORT=80) and `--hostname` with `env` (HOSTNAME) (launcher/src/main.rs); a flag beats its variable.
- Triton (`tritonserver`): getopt_long `--http-port` and `--http-address` (src/command_line_parser.cc), which also
  accepts `--opt=value` and unambiguous prefixes; no environment variable.
- llama.cpp (`llama-server`): `--port` and `--host`, env LLAMA_ARG_PORT and LLAMA_ARG_HOST, the flag overriding
  the variable (common/arg.cpp `common_params_parse_ex`, which matches whole arguments: `--port=8080` is
  "invalid argument", and no prefixes).
- llama-cpp-python (`python -m llama_cpp.server`): argparse `--port`/`--host` from its ServerSettings, then
  `uvicorn.run(host=os.getenv("HOST", ...), port=int(os.getenv("PORT", ...)))` (llama_cpp/server/__main__.py):
  the variables PORT and HOST beat the flags, so they are set whenever that server is recognized.

argparse and getopt_long take an unambiguous prefix of a long option (`--po 8000`): such a prefix of the port or
host flag is refused rather than guessed at, and so is `--` (what follows it is not options).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from proxy.exceptions import ProxyError


class RefusedError(ProxyError, ValueError):
    """The model server's port cannot be moved with certainty; the message says why."""


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    backend: str  # the `--backend` of `warden serve`, which picks the readiness path
    port_flag: str
    host_flag: str
    short_port: str | None = None  # clap's `-p`
    equals: bool = True  # accepts `--flag=value`
    prefixes: bool = True  # accepts unambiguous prefixes of long options
    port_env: str | None = None
    host_env: str | None = None
    env_wins: bool = False  # the variable beats the flag
    no_tcp: tuple[str, ...] = ()  # flags after which the server listens on no TCP port at all


VLLM = Server("vllm", "vllm", "--port", "--host", no_tcp=("--uds",))
SGLANG = Server("sglang", "sglang", "--port", "--host")
TGI = Server("text-generation-launcher", "tgi", "--port", "--hostname", short_port="-p", prefixes=False,
             port_env="PORT", host_env="HOSTNAME")
TRITON = Server("tritonserver", "triton", "--http-port", "--http-address")
LLAMA_SERVER = Server("llama-server", "llama_cpp", "--port", "--host", equals=False, prefixes=False,
                      port_env="LLAMA_ARG_PORT", host_env="LLAMA_ARG_HOST")
LLAMA_CPP_PYTHON = Server("llama_cpp.server", "llama_cpp", "--port", "--host", port_env="PORT", host_env="HOST",
                          env_wins=True)
# An executable by its file name, a Python module by its name after `-m`.
_EXECUTABLES = {"text-generation-launcher": TGI, "tritonserver": TRITON, "llama-server": LLAMA_SERVER}
_MODULES = {"vllm.entrypoints.openai.api_server": VLLM, "sglang.launch_server": SGLANG,
            "llama_cpp.server": LLAMA_CPP_PYTHON}
# When no server is recognized in the command line, `warden.io/backend` names the flags. llama_cpp stands for
# two servers reading different variables, openai for any server: neither gets a variable set.
BY_BACKEND = {
    "vllm": VLLM, "sglang": SGLANG, "tgi": TGI, "triton": TRITON,
    "llama_cpp": Server("llama.cpp", "llama_cpp", "--port", "--host", equals=False, prefixes=False),
    "openai": Server("an OpenAI-compatible server", "openai", "--port", "--host", prefixes=False),
}
_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")
_PYTHON_FLAGS = frozenset({"-u", "-B", "-O", "-OO", "-E", "-s", "-S", "-I", "-q", "-b", "-bb", "-P"})
_PYTHON_FLAGS_WITH_VALUE = frozenset({"-X", "-W"})
LOOPBACK = "127.0.0.1"


def identify(argv: Sequence[str]) -> tuple[Server, int] | None:
    """The server `argv` starts and the index of its first own argument; None for anything else."""
    if not argv:
        return None
    program = os.path.basename(argv[0])
    if program == "vllm" and len(argv) > 1 and argv[1] == "serve":
        return VLLM, 2
    if program in _EXECUTABLES:
        return _EXECUTABLES[program], 1
    if not _PYTHON.fullmatch(program):
        return None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in _PYTHON_FLAGS:
            i += 1
        elif arg in _PYTHON_FLAGS_WITH_VALUE:
            i += 2
        elif arg == "-m" and i + 1 < len(argv):
            server = _MODULES.get(argv[i + 1])
            return (server, i + 2) if server else None
        elif arg.startswith("-m") and len(arg) > 2:
            server = _MODULES.get(arg[2:])
            return (server, i + 1) if server else None
        else:
            return None
    return None


@dataclass(frozen=True, slots=True)
class Use:
    """One occurrence of a flag: `tokens[index]` is the flag, its value is `tokens[value_index]` (the same token
    for `--flag=value`, `-pVALUE`), and `prefix` is what stays before the value in that token."""

    index: int
    value_index: int
    value: str
    prefix: str


def find(tokens: Sequence[str], start: int, server: Server, flag: str, where: str) -> list[Use]:
    """Every use of `flag` (the server's port or host flag) in `tokens[start:]`; RefusedError when one is written
    in a form the server reads differently than it looks."""
    uses: list[Use] = []
    short = server.short_port if flag == server.port_flag else None
    i = start
    while i < len(tokens):
        arg = tokens[i]
        name, eq, value = arg.partition("=")
        if arg == "--":
            raise RefusedError(f"{where}: `--` ends {server.name}'s options; its {flag} cannot be placed with "
                               "certainty")
        if arg == flag or (short and arg == short):
            if i + 1 >= len(tokens):
                raise RefusedError(f"{where}: {arg} has no value")
            uses.append(Use(i, i + 1, tokens[i + 1], ""))
            i += 2
            continue
        if eq and name == flag:
            if not server.equals:
                raise RefusedError(f"{where}: {server.name} does not accept {arg!r} (only `{flag} VALUE`)")
            uses.append(Use(i, i, value, flag + "="))
        elif short and arg.startswith(short) and len(arg) > len(short):
            rest = arg[len(short):]
            prefix = short + ("=" if rest.startswith("=") else "")
            uses.append(Use(i, i, arg[len(prefix):], prefix))
        elif server.prefixes and name.startswith("--") and len(name) > 2 and name != flag and flag.startswith(name):
            raise RefusedError(f"{where}: {name!r} abbreviates {flag}; write {flag} in full")
        i += 1
    return uses


@dataclass(frozen=True, slots=True)
class Plan:
    """What to change in the server's own arguments: token index -> new token, tokens to append, variables."""

    edits: dict[int, str]
    append: tuple[str, ...]
    env: dict[str, str]


def plan(tokens: Sequence[str], start: int, server: Server, upstream: int, internal: int, where: str,
         may_append: bool) -> Plan | None:
    """Move `server` from `upstream` to 127.0.0.1:`internal`: its port flags get `internal`, its host flags
    127.0.0.1 (appended when absent). None when no port flag is present and `may_append` is False."""
    for arg in tokens[start:]:
        if arg in server.no_tcp or arg.partition("=")[0] in server.no_tcp:
            raise RefusedError(f"{where}: {server.name} with {arg.partition('=')[0]} listens on no TCP port")
    ports = find(tokens, start, server, server.port_flag, where)
    hosts = find(tokens, start, server, server.host_flag, where)
    for use in ports:
        if use.value != str(upstream):
            raise RefusedError(f"{where}: {server.name} listens on {tokens[use.index]} {use.value!r}, not on the "
                               f"upstream port {upstream}: set warden.io/upstream-port to the port it serves on")
    env = {server.port_env: str(internal), server.host_env: LOOPBACK} \
        if server.env_wins and server.port_env and server.host_env else {}
    if not ports and not may_append:
        return None
    edits = {u.value_index: u.prefix + str(internal) for u in ports}
    edits.update({u.value_index: u.prefix + LOOPBACK for u in hosts})
    append: tuple[str, ...] = () if ports else (server.port_flag, str(internal))
    if not hosts:
        append += (server.host_flag, LOOPBACK)
    return Plan(edits, append, env)


def port_values(tokens: Sequence[str], start: int, server: Server) -> list[str]:
    """The values given to the port flag (for matching warden.io/upstream-port); forms aside."""
    try:
        return [u.value for u in find(tokens, start, server, server.port_flag, "")]
    except RefusedError:
        return []
