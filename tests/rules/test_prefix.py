"""Prefix closures: every prefix of every match matches the closure; widths are right."""

from __future__ import annotations

import re

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from rules.pii import BUILTIN_SPECS
from rules.prefix import max_width, prefix_closure

PATTERNS = [
    "(?i)(代[考]|替考|枪手)",
    "abc|abd",
    "[0-9]{3}-[0-9]{4}",
    "x+y",
    "(?:ab){2,3}c?",
    *[s.prefix + s.value for s in BUILTIN_SPECS if len(s.value) < 400],
]


def _full(closure: str) -> re2._Regexp:
    opts = re2.Options()
    opts.log_errors = False
    opts.max_mem = 64 << 20
    return re2.compile(f"(?:{closure})\\z", opts)


@pytest.mark.parametrize("pattern", PATTERNS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_prefix_of_a_match_is_in_the_closure(pattern: str, data: st.DataObject) -> None:
    closure = prefix_closure(pattern)
    assert closure is not None
    rx = _full(closure)
    whole = _full(pattern)
    # Python's \s is wider than RE2's: keep the samples RE2 itself accepts.
    sample = data.draw(
        st.from_regex(re.compile(pattern), fullmatch=True).filter(lambda s: len(s) < 200 and bool(whole.fullmatch(s)))
    )
    for i in range(len(sample) + 1):
        assert rx.fullmatch(sample[:i]) is not None, (pattern, sample[:i])


def test_closure_rejects_what_cannot_grow() -> None:
    rx = _full(prefix_closure("(?i)(代[考]|替考|枪手)") or "")
    assert rx.fullmatch("代") and rx.fullmatch("替考") and rx.fullmatch("")
    assert not rx.fullmatch("考") and not rx.fullmatch("代代")


def test_unparsable_patterns_have_no_closure() -> None:
    assert prefix_closure(r"\p{Han}+") is None
    assert max_width(r"\p{Han}") is None


def test_widths() -> None:
    assert max_width("[0-9]{3}-[0-9]{4}") == 8
    assert max_width("a+") is None
    assert max_width("(?i)(代[考]|替考|枪手)") == 2
