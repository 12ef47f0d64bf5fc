from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Callable
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proxy.errors import invalid_path
from proxy.paths import MAX_PATH_CHARS, MAX_SPELLINGS, judge_path, normalizations, remove_dot_segments
from proxy.state import INSPECTED_ROUTES, Route, classify_route

# Every route Warden knows, spelled as the model server's routers spell it.
ROUTES: dict[str, Route] = {
    "/v1/chat/completions": Route.CHAT,
    "/v1/completions": Route.COMPLETIONS,
    "/v1/responses": Route.RESPONSES,
    "/v1/embeddings": Route.EMBEDDINGS,
    "/v2/models/llama/infer": Route.KSERVE_V2,
    "/v2/models/llama/versions/1/infer": Route.KSERVE_V2,
    "/v2/models/llama/generate": Route.TRITON_GENERATE,
    "/v2/models/llama/generate_stream": Route.TRITON_GENERATE,
    "/v1/load_lora_adapter": Route.MODEL_ADMIN,
    "/v1/unload_lora_adapter": Route.MODEL_ADMIN,
    "/v2/repository/models/llama/load": Route.MODEL_ADMIN,
    "/v1/models": Route.MODELS,
    "/health": Route.HEALTH,
}


def _encode(char: str) -> str:
    return "".join(f"%{byte:02X}" for byte in char.encode())


def _last_letter(path: str, spell: Callable[[str], str]) -> str:
    i = path.rstrip("/").rfind("/") + 1  # the first letter of the last segment: `c` of `completions`
    return path[:i] + spell(path[i]) + path[i + 1:]


def _first_segment(path: str, spell: Callable[[str], str]) -> str:
    return path[:1] + spell(path[1]) + path[2:]  # `v` of `v1`, `h` of `health`


def _at_last_slash(path: str, insert: str) -> str:
    i = path.rfind("/")
    return path[:i] + insert + path[i:]


def _last_slash(path: str, spelled: str) -> str:
    i = path.rfind("/")
    return path[:i] + spelled + path[i + 1:]


def _folding_letter(path: str) -> str:
    """The last segment with its first `i` or `s` as `ı` or `ſ`, which upper-case to `I` and `S` (ASP.NET compares
    upper-cased), or else with a fullwidth letter."""
    head, _, last = path.rpartition("/")
    for plain, folding in (("i", "\u0131"), ("s", "\u017f")):
        if plain in last:
            return f"{head}/{last.replace(plain, folding, 1)}"
    return _last_letter(path, lambda c: chr(ord(c) + 0xFEE0))


def _after_first_segment(path: str, insert: str) -> str:
    i = path.find("/", 1)
    return path + insert if i < 0 else path[:i] + insert + path[i:]


# Each spelling a server may route as the path itself (issue 20): aiohttp and uvicorn decode, Go resolves dot
# segments and merges slashes, Tomcat drops `;params`, IIS takes `\` and ignores case, a proxy may decode twice.
VARIANTS: dict[str, Callable[[str], str]] = {
    "encoded letter": lambda p: _last_letter(p, _encode),
    "encoded letter, lower hex": lambda p: _last_letter(p, lambda c: _encode(c).lower()),
    "encoded first segment": lambda p: _first_segment(p, _encode),
    "encoded slash": lambda p: _last_slash(p, "%2F"),
    "every byte encoded": lambda p: "".join(_encode(c) for c in p),
    "double-encoded": lambda p: _last_letter(p, lambda c: "%25" + _encode(c)[1:]),
    "triple-encoded": lambda p: _last_letter(p, lambda c: "%2525" + _encode(c)[1:]),
    "dot segment": lambda p: _at_last_slash(p, "/."),
    "dot-dot segment": lambda p: _at_last_slash(p, "/x/.."),
    "dot-dot above the root": lambda p: "/.." + p,
    "encoded dot-dot": lambda p: _at_last_slash(p, "/x/%2e%2E"),
    "trailing dot": lambda p: p + "/.",
    "repeated slash": lambda p: _at_last_slash(p, "/"),
    "leading double slash": lambda p: "/" + p,
    "two trailing slashes": lambda p: p + "//",
    ";param on last segment": lambda p: p + ";x=1",
    ";param on first segment": lambda p: _after_first_segment(p, ";jsessionid=1"),
    "tomcat ..;": lambda p: _at_last_slash(p, "/x/..;"),
    "encoded ;param": lambda p: p + "%3Bx",
    "upper case": lambda p: p.upper(),
    "upper-case letter": lambda p: _last_letter(p, str.upper),
    "backslashes": lambda p: p.replace("/", "\\"),
    "encoded backslash": lambda p: _last_slash(p, "%5c"),
    "fragment": lambda p: p + "#x",
    "encoded query": lambda p: p + "%3Fx=1",
    "NUL": lambda p: p + "%00.json",
    "absolute-form": lambda p: "http://model:8000" + p,
    "absolute-form, upper scheme": lambda p: "HTTP://model" + p,
    "scheme-relative": lambda p: "//model" + p,
    "no leading slash": lambda p: p[1:],
    "fullwidth letter": lambda p: _last_letter(p, lambda c: chr(ord(c) + 0xFEE0)),
    "dotless i or long s": _folding_letter,
}


# Spellings that are the same route however case is read: `/v2/repository/...` is model admin whatever its verb.
SAME_ROUTE = {("/v2/repository/models/llama/load", "upper-case letter")}


@pytest.mark.parametrize(("path", "route"), ROUTES.items())
def test_each_route_in_its_own_spelling_passes_as_that_route(path: str, route: Route) -> None:
    for spelled in (path, path + "/", path + "?x=1", path + "?a=%2F&b=..//"):
        verdict = judge_path(spelled)
        assert (verdict.route, verdict.refused) == (route, False), spelled


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize(("path", "route"), ROUTES.items())
def test_each_route_in_any_other_spelling_is_refused(path: str, route: Route, variant: str) -> None:
    spelled = VARIANTS[variant](path)
    assert spelled != path
    verdict = judge_path(spelled)
    if (path, variant) in SAME_ROUTE:
        assert (verdict.route, verdict.refused) == (route, False)
        return
    assert verdict.refused, spelled
    assert verdict.route is route, spelled
    assert verdict.resembles == _pattern(path)


def _pattern(path: str) -> str:
    if path.startswith("/v2/models/"):
        return "/v2/models/{model}/" + path.rsplit("/", 1)[1]
    return "/v2/repository/..." if path.startswith("/v2/repository/") else path


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/v2/models/Llama-3.1-8B/infer", Route.KSERVE_V2),  # case in a model name changes no route
        ("/v2/models/llama/INFER/generate", Route.TRITON_GENERATE),
        ("/static/../x", Route.OTHER),  # unknown routes pass through exactly, however spelled
        ("/files/a%20b;v=1//c\\d", Route.OTHER),
        ("/V2/Other", Route.OTHER),
        ("/.well-known/openid-configuration", Route.OTHER),
        ("/v1/chat/completions%20", Route.OTHER),
        ("/v1/chat", Route.OTHER),
        ("http://model/metrics", Route.OTHER),
        ("*", Route.OTHER),
        ("", Route.OTHER),
    ],
)
def test_paths_no_normalization_brings_to_another_route_pass(path: str, route: Route) -> None:
    assert judge_path(path) == judge_path(path + "?q=1")
    verdict = judge_path(path)
    assert (verdict.route, verdict.refused) == (route, False)


@pytest.mark.parametrize(
    ("path", "route"),
    [
        ("/V1/CHAT/COMPLETIONS", Route.CHAT),  # an unknown route that folds into a known one
        ("/v2/models/llama/%2E%2E/infer", Route.KSERVE_V2),  # `..` a model name to Starlette, a dot segment to Go
        ("/v2/models//infer", Route.KSERVE_V2),
        ("/v1/chat/completions/%2E%2E/..", Route.CHAT),  # chat when dots are resolved before decoding
        ("/x/../v1/embeddings", Route.EMBEDDINGS),
        ("/v1/models%2F..%2F..%2Fv1%2Fresponses", Route.RESPONSES),  # an inspected route is named first
    ],
)
def test_paths_whose_route_depends_on_the_server_are_refused(path: str, route: Route) -> None:
    verdict = judge_path(path)
    assert verdict.refused and verdict.route is route


def test_a_refusal_names_a_pattern_never_the_clients_text() -> None:
    verdict = judge_path("/v2/models/110105199003071239%2Fx/infer")
    assert verdict.refused and verdict.resembles == "/v2/models/{model}/infer"
    error = invalid_path(verdict.resembles)
    assert (error.status, error.type, error.code, error.param) == (400, "invalid_request_error", "invalid_path", None)
    assert "/v2/models/{model}/infer" in error.message and "110105" not in error.message


def test_hostile_paths_are_refused_within_bounds() -> None:
    many = "/" + "%2F/" * 100  # each `//` read as an empty authority drops one more segment
    assert normalizations(many) is None
    assert judge_path(many).refused and judge_path(many).resembles is None
    long = "/static/" + "%41" * MAX_PATH_CHARS
    assert judge_path(long).refused
    assert not judge_path("/static/" + "a" * 2 * MAX_PATH_CHARS).refused  # a plain path is never too long
    assert MAX_SPELLINGS >= 16


@pytest.mark.parametrize(
    ("path", "resolved"),
    [  # RFC 3986 section 5.2.4 and its examples in 5.4
        ("/a/b/c/./../../g", "/a/g"),
        ("/a/b/..", "/a/"),
        ("/a/b/.", "/a/b/"),
        ("/..", "/"),
        ("/../../g", "/g"),
        ("/a//..", "/a/"),
        ("/a/.b/..c", "/a/.b/..c"),
    ],
)
def test_remove_dot_segments(path: str, resolved: str) -> None:
    assert remove_dot_segments(path) == resolved


# -- the property: whatever a server does to a path, Warden never takes an inspected route for `other` ---------
# The servers' normalizations, written apart from proxy/paths.py with the standard library's own functions.
SERVER_STEPS: dict[str, Callable[[str], str]] = {
    "percent-decode": unquote,
    "posix normpath": lambda p: posixpath.normpath(p) if p.startswith("/") else p,
    "RFC 3986 resolve": lambda p: urlsplit(urljoin("http://h/", p)).path,
    "absolute-form path": lambda p: urlsplit(p).path or "/",
    "drop ;params": lambda p: "/".join(segment.split(";", 1)[0] for segment in p.split("/")),
    "merge slashes": lambda p: re.sub("/+", "/", p),
    "backslash": lambda p: p.replace("\\", "/"),
    "lower case": str.lower,
    "cut at # or NUL": lambda p: re.split("[#\x00]", p, maxsplit=1)[0],
    "NFKC": lambda p: unicodedata.normalize("NFKC", p),
}

# Each rewrite a client may make, and the server steps that undo it.
_REWRITES: dict[str, tuple[str, ...]] = {
    "encode": ("percent-decode",), "encode %": ("percent-decode", "percent-decode"),
    "dot": ("posix normpath",), "dot-dot": ("RFC 3986 resolve", "percent-decode"), "slash": ("merge slashes",),
    "param": ("drop ;params",), "upper": ("lower case",), "backslash": ("backslash", "percent-decode"),
    "prefix": ("absolute-form path",), "suffix": ("cut at # or NUL", "percent-decode"), "fullwidth": ("NFKC",),
    "delete": (),
}


@st.composite
def spellings(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A known path rewritten a few times, and the server steps that undo the rewrites (a server may apply them
    in any order and add others: the property holds whatever the server does)."""
    path = draw(st.sampled_from([*ROUTES, "/v1/chat/x", "/v2/models/m/info", "/other/path"]))
    undo: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        rewrite = draw(st.sampled_from(list(_REWRITES)))
        undo += _REWRITES[rewrite]
        i = draw(st.integers(0, len(path)))
        char = path[i: i + 1]
        if rewrite == "encode" and char:
            path = path[:i] + draw(st.sampled_from([_encode(char), _encode(char).lower()])) + path[i + 1:]
        elif rewrite == "encode %":
            path = path.replace("%", "%25", 1)
        elif rewrite in ("dot", "dot-dot", "slash", "param"):
            insert = {"dot": "/.", "dot-dot": draw(st.sampled_from(["/x/..", "/..", "/%2e%2e", "/x/..;"])),
                      "slash": "/", "param": ";p=1"}[rewrite]
            path = path[:i] + insert + path[i:]
        elif rewrite == "upper":
            path = path[:i] + char.upper() + path[i + 1:]
        elif rewrite == "backslash" and "/" in path:
            i = draw(st.sampled_from([j for j, c in enumerate(path) if c == "/"]))
            path = path[:i] + draw(st.sampled_from(["\\", "%5C"])) + path[i + 1:]
        elif rewrite == "prefix":
            path = draw(st.sampled_from(["http://h", "HTTP://h:1", "//h", "h"])) + path
        elif rewrite == "suffix":
            path += draw(st.sampled_from(["#f", "%23f", "%3Fq", "%00", "/", ";", "%20"]))
        elif rewrite == "fullwidth" and "!" <= char <= "~":
            path = path[:i] + chr(ord(char) + 0xFEE0) + path[i + 1:]
        elif rewrite == "delete":
            path = path[:i] + path[i + 1:]
    return path, undo


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spelled=spellings(), extra=st.lists(st.sampled_from(list(SERVER_STEPS)), max_size=4), data=st.data())
def test_no_server_normalization_reaches_an_inspected_route_warden_passes_as_other(
    spelled: tuple[str, list[str]], extra: list[str], data: st.DataObject
) -> None:
    path, undo = spelled
    steps = data.draw(st.permutations(undo + extra))
    routed = path.split("?", 1)[0]
    try:
        for step in steps:
            routed = SERVER_STEPS[step](routed)
    except ValueError:  # urlsplit refuses the target: so would the server
        routed = ""
    reached = classify_route(routed)
    verdict = judge_path(path)
    if reached in INSPECTED_ROUTES or reached is Route.MODEL_ADMIN:
        assert verdict.refused or verdict.route is reached, (path, steps, routed)
    if not verdict.refused:
        assert verdict.route is classify_route(path)  # what passes is classified as spelled, as before


@settings(max_examples=300, deadline=None)
@given(path=st.text(alphabet=st.sampled_from("/\\.%;?#:2563aCcEeFfv1x\x00\u0131\uff0f"), max_size=40))
def test_any_path_gets_a_verdict(path: str) -> None:
    verdict = judge_path(path)
    assert verdict.refused or verdict.resembles is None
    assert verdict.resembles is None or verdict.resembles.startswith("/")
