"""Point a model container's server at 127.0.0.1:I, or refuse (issue 25): the container-level half of injection.

Three shapes of container are read:
- a shell form: `command`/`args` spell `sh -c SCRIPT` (sh, bash, dash, ash or ksh, `-c` possibly grouped with
  `-e`, `-l`, `-u`, `-x`), the script being one simple command line (proxy/k8s/shell.py): optional `NAME=value`
  assignments, an optional `exec`, then a server that `servers.identify` knows. Only the port and host words
  are replaced, or the flags appended after the last word; every other character of the script is kept.
- an exec form with `command`: the server is recognized from it (or the container is read with the flags of
  `warden.io/backend`); an exec form with `args` only: they go to the image's entrypoint, recognized when they
  start with the server's own program (wrapper entrypoints such as Triton's exec "$@"), else they are that
  server's flags when `warden.io/backend` says which server it is.
- neither: only a server that reads its port from a variable can be moved (TGI: PORT and HOSTNAME).

A port flag present gets I (and must say the upstream port P); absent, the flags are appended when the server is
known. A variable is set only when the recognized (or annotated) server reads it. Anything else is a
`RefusedError`: webhook denial, `warden inject` exit status 1.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from proxy.k8s import servers, shell
from proxy.k8s.servers import LOOPBACK, RefusedError, Server

_SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh"})
_SHELL_C = re.compile(r"-[elux]*c[elux]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


class NoServerError(RefusedError):
    """No model server is recognized in the container and none is annotated."""


@dataclass(frozen=True, slots=True)
class Moved:
    """The model container's new fields (only those that change) and how its server was moved."""

    fields: dict[str, Any]
    backend: str
    server: str
    how: str  # recorded in warden.io/status as "rewrite": args, command, env, shell:args, ... (+env)


@dataclass(frozen=True, slots=True)
class _Located:
    """The container's command line as one token list, each token's (field, index) remembered."""

    tokens: list[str]
    places: list[tuple[str, int]]


def _located(container: dict[str, Any]) -> _Located:
    tokens: list[str] = []
    places: list[tuple[str, int]] = []
    for key in ("command", "args"):
        for i, token in enumerate(container.get(key) or []):
            tokens.append(str(token))
            places.append((key, i))
    return _Located(tokens, places)


def _shell_script(line: _Located) -> int | None:
    """The token index of the script when the command line is `SHELL -c SCRIPT ...`."""
    t = line.tokens
    if len(t) >= 3 and os.path.basename(t[0]) in _SHELLS and _SHELL_C.fullmatch(t[1]):
        return 2
    return None


def port_values(container: dict[str, Any], backend: str | None) -> list[str]:
    """The values the container's command line gives its server's port flag (best effort, never raises)."""
    line = _located(container)
    script_at = _shell_script(line)
    tokens, offset = line.tokens, 0
    if script_at is not None:
        try:
            tokens = [w.value for w in shell.words(tokens[script_at])]
        except shell.ShellError:
            return []
        while offset < len(tokens) and _ASSIGNMENT.match(tokens[offset]):
            offset += 1
        offset += offset < len(tokens) and tokens[offset] == "exec"
    found = servers.identify(tokens[offset:])
    if found:
        return servers.port_values(tokens, offset + found[1], found[0])
    return servers.port_values(tokens, 0, servers.BY_BACKEND.get(backend or "vllm", servers.VLLM))


def move(container: dict[str, Any], annotated: str | None, upstream: int, internal: int, where: str) -> Moved:
    """How to move `container`'s server from `upstream` to 127.0.0.1:`internal` (module docstring)."""
    where = f"{where} container {container.get('name')!r}"
    line = _located(container)
    script_at = _shell_script(line)
    if script_at is not None:
        return _move_shell(container, line, script_at, annotated, upstream, internal, where)
    has_command = bool(container.get("command"))
    found = servers.identify(line.tokens)
    server, start = found if found else (None, 1 if has_command else 0)
    backend = _backend(server, annotated, where)
    flags = server or servers.BY_BACKEND[backend]
    may_append = server is not None or (not has_command and bool(line.tokens) and annotated is not None)
    # what the report and warden.io/status call it: recognized, named by the annotation, or only its port flag
    name = server.name if server else f"{flags.name} (warden.io/backend)" if annotated else "an unrecognized server"
    planned = servers.plan(line.tokens, start, flags, upstream, internal, where, may_append) if line.tokens else None
    if planned is not None:
        fields = _apply_tokens(container, line, planned)
        how = "+".join(sorted({line.places[i][0] for i in planned.edits}
                              | ({"args" if container.get("args") else "command"} if planned.append else set())))
        if planned.env:
            fields["env"] = _set_env(container, planned.env)
            how += "+env"
        return Moved(fields, backend, name, how)
    if flags.port_env and flags.host_env and (server is not None or annotated is not None):
        _check_env(container, flags, upstream, where)
        env = _set_env(container, {flags.port_env: str(internal), flags.host_env: LOOPBACK})
        return Moved({"env": env}, backend, name, "env")
    if server is None and annotated is None:
        raise NoServerError(f"{where}: no model server recognized in its command or args, and no warden.io/backend "
                            "annotation names one")
    shown = " ".join(line.tokens) or "the image's entrypoint"
    raise RefusedError(f"{where}: {flags.name}'s port cannot be moved with certainty: no {flags.port_flag} in "
                       f"{shown!r}, {'an unrecognized command' if has_command else 'no command'}, and "
                       f"{flags.name} reads no port variable; give the port flag in args")


def _move_shell(container: dict[str, Any], line: _Located, script_at: int, annotated: str | None, upstream: int,
                internal: int, where: str) -> Moved:
    key, index = line.places[script_at]
    script = line.tokens[script_at]
    try:
        words = shell.words(script)
    except shell.ShellError as exc:
        raise RefusedError(f"{where}: the shell script in {key}[{index}] is not one simple command line "
                           f"({exc}); write the server's command in exec form") from exc
    first = 0
    assigned: list[str] = []
    while first < len(words) and _ASSIGNMENT.match(words[first].raw(script)):
        assigned.append(words[first].value.partition("=")[0])
        first += 1
    if first < len(words) and words[first].raw(script) == "exec":
        first += 1
    argv = [w.value for w in words[first:]]
    found = servers.identify(argv)
    if found is None:
        program = argv[0] if argv else "nothing"
        raise RefusedError(f"{where}: the shell script in {key}[{index}] runs {program!r}, not a model server "
                           "Warden knows (vllm serve, python -m vllm.entrypoints.openai.api_server, python -m "
                           "sglang.launch_server, text-generation-launcher, tritonserver, llama-server, python -m "
                           "llama_cpp.server)")
    server, start = found
    backend = _backend(server, annotated, where)
    names = {n for n in (server.port_env, server.host_env) if n}
    overridden = sorted(names & set(assigned)) if server.env_wins else []
    if overridden:
        raise RefusedError(f"{where}: the script sets {', '.join(overridden)}, which "
                           f"{server.name} prefers to its flags; remove the assignment")
    planned = servers.plan(argv, start, server, upstream, internal, where, may_append=True)
    assert planned is not None  # may_append=True always plans
    new = script
    if planned.append:  # first: it follows every word, so the spans of the words to edit stay where they are
        end = words[-1].end
        new = new[:end] + " " + " ".join(planned.append) + new[end:]
    for i in sorted(planned.edits, reverse=True):
        if not shell.is_plain(planned.edits[i]):
            raise RefusedError(f"{where}: {planned.edits[i]!r} would need quoting in the script")
        word = words[first + i]
        new = new[:word.start] + planned.edits[i] + new[word.end:]
    tokens = [str(t) for t in container[key]]
    fields: dict[str, Any] = {key: [*tokens[:index], new, *tokens[index + 1:]]}
    how = f"shell:{key}"
    if planned.env:
        fields["env"] = _set_env(container, planned.env)
        how += "+env"
    return Moved(fields, backend, server.name, how)


def _backend(server: Server | None, annotated: str | None, where: str) -> str:
    if server and annotated and annotated not in (server.backend, "openai"):
        raise RefusedError(f"{where}: warden.io/backend={annotated!r} but the container runs {server.name} "
                           f"(backend {server.backend!r})")
    return annotated or (server.backend if server else "vllm")


def _apply_tokens(container: dict[str, Any], line: _Located, planned: servers.Plan) -> dict[str, Any]:
    fields: dict[str, list[str]] = {}
    for key in ("command", "args"):
        if container.get(key):
            fields[key] = [str(t) for t in container[key]]
    for i, value in planned.edits.items():
        key, index = line.places[i]
        fields[key][index] = value
    if planned.append:
        target = "args" if "args" in fields else "command"
        fields[target] = [*fields[target], *planned.append]
    return {k: v for k, v in fields.items() if v != [str(t) for t in container.get(k) or []]}


def _check_env(container: dict[str, Any], server: Server, upstream: int, where: str) -> None:
    for entry in container.get("env") or []:
        if entry.get("name") == server.port_env:
            if "value" not in entry:
                raise RefusedError(f"{where}: {server.port_env} comes from valueFrom; its port is not known")
            if str(entry["value"]) != str(upstream):
                raise RefusedError(f"{where}: {server.port_env}={entry['value']!r}, not the upstream port {upstream}")


def _set_env(container: dict[str, Any], values: dict[str, str]) -> list[dict[str, Any]]:
    kept = [e for e in container.get("env") or [] if e.get("name") not in values]
    return [*kept, *({"name": k, "value": v} for k, v in values.items())]

