"""Prefix closures of regular expressions, for streaming hold-back (DESIGN section 4).

A streamed text may end in the middle of a match. To release as much as possible, the stream keeps only the
shortest suffix that could still grow into a match: the longest suffix that is a *prefix* of some string the
pattern matches. For a pattern P we build a regex C(P) whose language is all prefixes of L(P):

    C(a)        = a?                       (one character or class)
    C(e1 e2..)  = C(e1) | e1 C(e2 ..)      (nested, so linear in the pattern size)
    C(e{m,n})   = e{0,n-1} C(e)
    C(a | b)    = C(a) | C(b)

Anchors and word boundaries are dropped, which only widens the language (more hold-back, never less).
Patterns are parsed with Python's own regex parser (`re._parser`); a pattern it cannot read (RE2-only syntax
such as `\\p{Han}`) gets no closure and the caller falls back to holding back its maximum length.
Also gives each pattern's maximum match width in characters, or None when unbounded.
"""

from __future__ import annotations

import re
from re import _constants as C  # type: ignore[attr-defined]
from re import _parser as P  # type: ignore[attr-defined]
from typing import Any

_MAX_CLOSURE = 200_000  # characters of generated regex; beyond this, hold back by length instead

_CATEGORIES = {
    C.CATEGORY_DIGIT: r"\d",
    C.CATEGORY_NOT_DIGIT: r"\D",
    C.CATEGORY_SPACE: r"\s",
    C.CATEGORY_NOT_SPACE: r"\S",
    C.CATEGORY_WORD: r"\w",
    C.CATEGORY_NOT_WORD: r"\W",
}


class Unsupported(Exception):  # an internal signal, never escapes this module
    pass


def _lit(code: int) -> str:
    c = chr(code)
    if c.isalnum() or ord(c) > 127:
        return c
    return f"\\x{{{code:x}}}"


def _class_items(items: list[tuple[Any, Any]]) -> str:
    out = []
    neg = ""
    for op, av in items:
        if op is C.NEGATE:
            neg = "^"
        elif op is C.LITERAL:
            out.append(_lit(av))
        elif op is C.RANGE:
            out.append(f"{_lit(av[0])}-{_lit(av[1])}")
        elif op is C.CATEGORY:
            if av not in _CATEGORIES:
                raise Unsupported(str(av))
            out.append(_CATEGORIES[av])
        else:
            raise Unsupported(str(op))
    return f"[{neg}{''.join(out)}]"


def _flags(add: int, remove: int) -> str:
    on = "i" if add & re.IGNORECASE else ""
    on += "s" if add & re.DOTALL else ""
    off = "i" if remove & re.IGNORECASE else ""
    if not on and not off:
        return ""
    return on + (f"-{off}" if off else "")


def _emit_node(op: Any, av: Any) -> str:
    if op is C.LITERAL:
        return _lit(av)
    if op is C.NOT_LITERAL:
        return f"[^{_lit(av)}]"
    if op is C.ANY:
        return "(?s:.)"
    if op is C.IN:
        return _class_items(av)
    if op is C.AT:
        return ""
    if op is C.BRANCH:
        return "(?:" + "|".join(_emit_seq(list(alt)) for alt in av[1]) + ")"
    if op is C.SUBPATTERN:
        _group, add, remove, sub = av
        f = _flags(add, remove)
        return f"(?{f}:" + _emit_seq(list(sub)) + ")"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        lo, hi, sub = av
        inner = _emit_seq(list(sub))
        upper = "" if hi is C.MAXREPEAT else str(hi)
        return f"(?:{inner}){{{lo},{upper}}}"
    if op is C.CATEGORY:
        return _CATEGORIES[av]
    raise Unsupported(str(op))


def _emit_seq(seq: list[tuple[Any, Any]]) -> str:
    return "".join(_emit_node(op, av) for op, av in seq)


def _closure_node(op: Any, av: Any) -> str:
    if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN, C.CATEGORY):
        return f"(?:{_emit_node(op, av)})?"
    if op is C.AT:
        return ""
    if op is C.BRANCH:
        return "(?:" + "|".join(_closure_seq(list(alt)) for alt in av[1]) + ")"
    if op is C.SUBPATTERN:
        _group, add, remove, sub = av
        f = _flags(add, remove)
        return f"(?{f}:" + _closure_seq(list(sub)) + ")"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        _lo, hi, sub = av
        if hi == 0:
            return ""
        inner = _emit_seq(list(sub))
        upper = "" if hi is C.MAXREPEAT else str(hi - 1)
        return f"(?:(?:{inner}){{0,{upper}}}{_closure_seq(list(sub))})"
    raise Unsupported(str(op))


def _closure_seq(seq: list[tuple[Any, Any]]) -> str:
    if not seq:
        return ""
    head_op, head_av = seq[0]
    rest = _closure_seq(seq[1:])
    if not rest:
        return _closure_node(head_op, head_av)
    return f"(?:{_closure_node(head_op, head_av)}|{_emit_node(head_op, head_av)}{rest})"


def _parse(pattern: str) -> Any | None:
    try:
        return P.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return None


def prefix_closure(pattern: str) -> str | None:
    """A regex (RE2 syntax) matching every prefix of every match of `pattern`; None if we cannot build it."""
    tree = _parse(pattern)
    if tree is None:
        return None
    try:
        body = _closure_seq(list(tree))
    except (Unsupported, RecursionError):
        return None
    if len(body) > _MAX_CLOSURE:
        return None
    f = _flags(tree.state.flags, 0)
    return f"(?{f}:{body})" if f else f"(?:{body})"


def max_width(pattern: str) -> int | None:
    """Longest match of `pattern` in characters, None when unbounded or unknown."""
    tree = _parse(pattern)
    if tree is None:
        return None
    hi = int(tree.getwidth()[1])
    return None if hi >= C.MAXREPEAT or hi >= 2**31 - 1 else hi
