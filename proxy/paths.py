"""Which route a request path reaches on the model server, however the client spelled it (issue 20).

Servers route on a normalized path, and each normalizes differently: uvicorn percent-decodes before Starlette
matches (`/v1/chat/%63ompletions` is the chat handler), aiohttp decodes through yarl, Go's ServeMux resolves
dot segments and merges slashes, Tomcat strips `;params`, IIS takes `\\` for `/` and ignores case, uvicorn on
httptools and aiohttp take an absolute-form target (which an HTTP/2 `:path` becomes upstream) by its path part,
and a proxy in between may decode once more. Classifying the raw path let every such spelling of an inspected
route pass as `other`, uninspected.

So every path has one spelling per route. A path no normalization changes is classified as it is (the common
case, kept cheap). Otherwise every path reachable by the normalizations below, applied in any order, is
classified (case folded); if any reaches a route Warden knows, the request is refused with 400 before anything
reaches the model, since which handler the server picks depends on its normalizations. A path whose every
normalization is still an unknown route passes through untouched, as unknown routes always do.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote

from proxy.state import EXACT_ROUTES, INSPECTED_ROUTES, Route, classify_route, route_pattern

# With no `//` and no `/.` in it, a path (then an optional query) that no normalization below changes: RFC 3986
# pchars without `%` or `;`. One character class: a pattern per segment costs twice as much.
_PLAIN = re.compile(r"/[A-Za-z0-9!$&'()*+,\-.:=@_~/]*(?s:\?.*)?")
# Enough for any server (they decode once, a proxy in between once more) and bounded for a hostile path: a path
# with more spellings than this, or longer than this and not plain, is refused rather than judged on part of its
# spellings (fail closed). The bounds keep the worst case near 10 ms; nginx refuses request lines over 8 KiB.
MAX_SPELLINGS = 64
MAX_PATH_CHARS = 8192
MAX_REMEMBERED_CHARS = 512  # verdicts on paths up to this long are remembered (1024 of them: under 1 MiB)
_PARAMS = re.compile(r";[^/]*")
_SLASHES = re.compile(r"/{2,}")
_END = re.compile(r"[?#\x00]")  # a decoded `?` or `#`, or a NUL a C server stops at, ends the path
_AUTHORITY = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:(?://[^/?#]*)?|//[^/?#]*")


@dataclass(frozen=True, slots=True)
class PathVerdict:
    route: Route  # for a refused path, the route it resembles
    refused: bool = False
    resembles: str | None = None  # refused: the route's pattern (`/v2/models/{model}/infer`), never client text


_PASS = {route: PathVerdict(route) for route in Route}


def judge_path(path: str) -> PathVerdict:
    """The route of `path` (a request target as mitmproxy gives `flow.request.path`: origin-form, or the
    absolute-form an HTTP/2 `:path` may hold), or a refusal when its spelling is not the route's one."""
    route = EXACT_ROUTES.get(path)
    if route is not None:  # the usual request: one lookup, cheaper than classify_route
        return _PASS[route]
    # A deployment sends a few paths over and over (its model names): remembered, each costs about a lookup.
    return _judge_remembered(path) if len(path) <= MAX_REMEMBERED_CHARS else _judge(path)


def _judge(path: str) -> PathVerdict:
    if _PLAIN.fullmatch(path) and "//" not in path and "/." not in path:
        route = classify_route(path)
        if route is not Route.OTHER:
            return _PASS[route]  # folding case keeps a known route's segments, so it is the same route
        folded = path.lower()
        if folded == path or classify_route(folded) is Route.OTHER:
            return _PASS[route]
    return _judge_spellings(path.split("?", 1)[0])


_judge_remembered = functools.lru_cache(maxsize=1024)(_judge)


def _judge_spellings(raw: str) -> PathVerdict:
    route = classify_route(raw)
    spellings = normalizations(raw) if len(raw) <= MAX_PATH_CHARS else None
    if spellings is None:
        return PathVerdict(route, refused=True, resembles=route_pattern(raw) if route is not Route.OTHER else None)
    known: dict[str, Route] = {}
    for spelling in spellings:
        folded = _fold(spelling)
        reached = route if folded == raw else classify_route(folded)
        if reached is not Route.OTHER:
            known[folded] = reached
    if spellings == {raw} and set(known.values()) <= {route}:
        return _PASS[route]  # canonical but for case that does not change the route (`/v2/models/Llama/infer`)
    if not known:
        return _PASS[route]  # no spelling reaches a known route (and so neither does `raw`): pass-through
    # Name an inspected route it resembles first: that is what the refusal protects.
    resembled, resembled_route = min(known.items(), key=lambda item: (item[1] not in INSPECTED_ROUTES, item[0]))
    return PathVerdict(resembled_route, refused=True, resembles=route_pattern(resembled))


def normalizations(path: str) -> set[str] | None:
    """`path` and every path the normalizations reach from it in any order and number (each is a function of the
    whole path, so the set is their closure); None past MAX_SPELLINGS. Any order, because the order changes the
    result: `/v1/chat/completions/%2E%2E/..` is the chat route when dot segments are resolved before decoding and
    `/v1` the other way round."""
    seen = {path}
    todo = [path]
    while todo:
        current = todo.pop()
        for step in _STEPS:
            reached = step(current)
            if reached not in seen:
                if len(seen) == MAX_SPELLINGS:
                    return None
                seen.add(reached)
                todo.append(reached)
    return seen


def _percent_decode(path: str) -> str:
    # Undecodable bytes stay distinct (surrogates), as mitmproxy keeps them in `flow.request.path`.
    return unquote(path, errors="surrogateescape") if "%" in path else path


def _backslashes(path: str) -> str:
    return path.replace("\\", "/")


def _cut_end(path: str) -> str:
    match = _END.search(path)
    return path if match is None else path[: match.start()]


def _strip_params(path: str) -> str:
    return _PARAMS.sub("", path) if ";" in path else path  # RFC 3986 3.3 `;` parameters, as Servlet containers do


def _merge_slashes(path: str) -> str:
    return _SLASHES.sub("/", path) if "//" in path else path


def _drop_authority(path: str) -> str:
    """The path part of an absolute-form (`http://host/p`) or scheme-relative (`//host/p`) target, rooted."""
    match = _AUTHORITY.match(path)
    if match is not None:
        path = path[match.end():]
    return path if path.startswith("/") else "/" + path


def _compatibility(path: str) -> str:
    # NFKC: fullwidth `／` and `ｃ` are `/` and `c` to servers that normalize Unicode (IIS best-fit mapping).
    return path if path.isascii() else unicodedata.normalize("NFKC", path)


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 for a path: `.` segments dropped, `..` drops the segment before it; a path ending
    in a dot segment keeps its trailing slash (`/a/b/..` is `/a/`), and `..` never climbs above the root."""
    if "." not in path:
        return path
    segments = path.split("/")
    out: list[str] = []
    for i, segment in enumerate(segments):
        if segment not in (".", ".."):
            out.append(segment)
            continue
        if segment == ".." and len(out) > 1:
            out.pop()
        if i == len(segments) - 1:
            out.append("")
    return "/".join(out)


_STEPS: tuple[Callable[[str], str], ...] = (
    _percent_decode, _backslashes, _cut_end, _strip_params, remove_dot_segments, _merge_slashes, _drop_authority,
    _compatibility,
)


def _fold(path: str) -> str:
    # Case-insensitive routers (ASP.NET's OrdinalIgnoreCase compares upper-cased): upper first, so `ı` and `ſ`
    # fold to `i` and `s` as they do there.
    return path.lower() if path.isascii() else path.upper().lower()
