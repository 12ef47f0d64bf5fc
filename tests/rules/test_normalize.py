"""Normalization: each view's text, and offsets that always point back at the raw text."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import normalize
from rules.normalize import (
    SET_SENTINEL,
    NormalizeConfig,
    Views,
    base_view,
    compact_view,
    normalize_literal,
    set_hits,
)

CONFIG = NormalizeConfig()


def test_ascii_text_is_unchanged_in_the_base_view() -> None:
    view = base_view("Call me at 10am", CONFIG)
    assert view.text == "Call me at 10am"
    assert view.maps == ()


def test_fullwidth_digits_and_letters_become_ascii_one_to_one() -> None:
    view = base_view("ＡＢＣ１２３", CONFIG)
    assert view.text == "ABC123"
    assert view.raw_span(3, 6) == (3, 6)


def test_chinese_punctuation_stays_so_plain_chinese_takes_the_fast_path() -> None:
    text = "你好，世界！（测试）：是的？"
    assert base_view(text, CONFIG).text == text
    assert base_view(text, CONFIG).maps == ()


def test_zero_width_and_bidi_characters_are_removed_and_offsets_skip_them() -> None:
    raw = "代\u200b考\u202e!"
    view = base_view(raw, CONFIG)
    assert view.text == "代考!"
    assert view.raw_span(0, 2) == (0, 3)
    assert view.raw_span(1, 2) == (2, 3)
    assert view.raw_span(2, 3) == (4, 5)


def test_expanding_characters_map_to_the_whole_source_character() -> None:
    view = base_view("ﬁle", CONFIG)
    assert view.text == "file"
    assert view.raw_span(0, 1) == (0, 1)
    assert view.raw_span(1, 4) == (0, 3)


def test_traditional_to_simplified_is_optional() -> None:
    assert compact_view("賭博網站", CONFIG).text == "赌博网站"
    assert compact_view("賭博網站", NormalizeConfig(traditional_to_simplified=False)).text == "賭博網站"


def test_compact_view_lowercases_and_removes_skip_characters_inside_words() -> None:
    for raw in ("代*考", "代 考", "代-考", "代 * 考", "代\u200b考"):
        view = compact_view(raw, CONFIG)
        assert view.text == "代考", raw
        assert view.raw_span(0, 2) == (0, len(raw))
    assert compact_view("P.O.R.N", CONFIG).text == "porn"
    assert compact_view("Ignore   previous\ninstructions", CONFIG).text == "ignore previous instructions"


def test_compact_view_keeps_word_spacing_and_digit_separators() -> None:
    assert compact_view("I have a class", CONFIG).text == "i have a class"
    assert compact_view("call 138-1234", CONFIG).text == "call 138-1234"


def test_skip_runs_longer_than_max_skip_are_kept() -> None:
    assert compact_view("代****考", CONFIG).text == "代****考"
    assert compact_view("代****考", NormalizeConfig(max_skip=4)).text == "代考"


def test_literals_normalize_like_texts() -> None:
    assert normalize_literal("ＴＡＫＥ  My Exam", CONFIG) == "take my exam"


def test_views_are_built_once_and_lazily() -> None:
    views = Views("abc", CONFIG)
    assert views.base is views.base
    assert views.compact is views.compact


ALPHABET = st.sampled_from(
    [*"ab Z1 -*.\t\n代考賭", "\u200b", "\u202e", "ﬁ", "Ａ", "１", "İ", "ß", "，", "…", "\ufeff", "①"]
)


@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_every_view_span_maps_inside_the_raw_text_in_order(raw: str) -> None:
    for view in (base_view(raw, CONFIG), compact_view(raw, CONFIG)):
        n = len(view.text)
        previous = 0
        for i in range(n + 1):
            start = view.raw_start(i) if i < n else len(raw)
            assert 0 <= start <= len(raw)
            assert start >= previous
            previous = start
        for i in range(n):
            a, b = view.raw_span(i, i + 1)
            assert 0 <= a < b <= len(raw)
            # The raw characters of a view character normalize to a text containing it.
            assert view.text[i] in compact_view(raw[a:b], CONFIG).text + base_view(raw[a:b], CONFIG).text


@given(st.lists(ALPHABET, max_size=40).map("".join))
def test_byte_spans_map_like_character_spans(raw: str) -> None:
    for view in (base_view(raw, CONFIG), compact_view(raw, CONFIG), Views(raw, CONFIG).lowered):
        text = view.text
        offsets = [len(text[:i].encode("utf-8", "surrogatepass")) for i in range(len(text) + 1)]
        for i in range(len(text)):
            for j in range(i + 1, min(len(text), i + 4) + 1):
                assert view.raw_span_bytes(offsets[i], offsets[j]) == view.raw_span(i, j)


def test_set_hits_reads_the_sentinel_and_fails_closed() -> None:
    opts = re2.Options()
    opts.log_errors = False
    rset = re2.Set.SearchSet(opts)
    for p in ("abc", "xyz", "q+"):
        rset.Add(p)
    sentinel = rset.Add(SET_SENTINEL)
    rset.Compile()
    assert set_hits(rset, sentinel, 3, b"..xyz..abc") == [0, 1]
    assert set_hits(rset, sentinel, 3, b"nothing") == []
    assert set_hits(rset, sentinel, 3, b"") == []  # the sentinel matches the empty text too
    assert set_hits(rset, sentinel, 3, b"\n" * 5000 + b"abc") == [0]  # and beyond any position 0 match

    class OutOfMemory:
        """RE2's Set.Match answers None when its DFA runs out of memory; that cannot be provoked on demand."""

        def Match(self, data: bytes) -> None:
            return None

    assert set_hits(OutOfMemory(), sentinel, 3, b"abc") == [0, 1, 2]


_MIXED = st.lists(st.sampled_from([
    "代", "考", "的", "賣", "，", "。", "ａ", "１", "\u200b", "\u00ad", "\ufeff", "İ", "Ｍ", "㈱", "ﬁ", " ", "*", "-",
    "take", "TAKE", "138", "\n", "\t", "x",
]), max_size=16).map("".join)


@settings(max_examples=400, deadline=None)
@given(_MIXED)
def test_a_text_without_changing_characters_is_its_own_base_view(text: str) -> None:
    from rules.normalize import changing_chars

    views = Views(text, CONFIG)
    if changing_chars(True).isdisjoint(text):
        assert views.base.text == text and views.base.maps == ()
        fast = Views.unchanged(text, CONFIG)
        assert fast.base.data == views.base.data
        assert fast.compact.text == views.compact.text
    else:
        assert views.base.text != text or views.base.maps != ()


# Around skip runs: ideographs (a compatibility one RE2 may not call a letter, a hexagram just below the
# unified block), Latin, Cyrillic, a title-case letter, digits, punctuation, a lone surrogate, a combining mark.
_AROUND_RUNS = st.lists(st.sampled_from([
    *" ..--*_·•|/\\~+#\t\n", *"abZ19代考试", "é", "ж", "ǅ", "\u4dc0", "\ufa6e", "\uf900", "，", "。", "²", "\u0307",
    "İ", "\U00020000", "\ud800", "\u3000", "\u200b", "Ａ", "ﬁ", "\x85",
]), max_size=30).map("".join)
_SKIP_CONFIGS = [
    CONFIG, NormalizeConfig(max_skip=1), NormalizeConfig(max_skip=0), NormalizeConfig(max_skip=8),
    NormalizeConfig(skip_chars="-."), NormalizeConfig(skip_chars=""), NormalizeConfig(skip_chars="\u3000²-"),
    NormalizeConfig(skip_chars="x-"), NormalizeConfig(skip_chars="考 "),
]


@contextmanager
def _skip_runs_in_python() -> Iterator[None]:
    """`compact_of` as an install without the C module runs it: skip runs found by Python's `re`."""
    saved = normalize._native
    normalize._native = None
    try:
        yield
    finally:
        normalize._native = saved


def test_the_c_skip_run_finder_is_built() -> None:
    """The install compiles rules/_compact.c (its extension is optional so that an install without a compiler
    still works, slower); a build that silently fell back would leave the C path untested."""
    try:
        from rules import _compact
    except ImportError as e:
        pytest.fail(f"rules/_compact.c was not compiled by the install ({e}): install gcc, then `make install`")
    assert normalize._native is _compact


@settings(max_examples=300, deadline=None)
@given(_AROUND_RUNS)
def test_the_skip_runs_found_in_c_and_by_re_are_the_ones_re2_finds(text: str) -> None:
    """`compact_of` finds skip runs in C (rules/_compact.c) or, without it, with Python's `re`; `_compact_re2`
    (one RE2 search per run, and the path for skip characters that are letters) is the definition: same text,
    same offsets back to the raw text."""
    from rules.normalize import _compact_re2, compact_of, lowered_of

    for config in _SKIP_CONFIGS:
        base = base_view(text, config)
        theirs = _compact_re2(lowered_of(base), config)
        in_c = compact_of(base, config)
        with _skip_runs_in_python():
            by_re = compact_of(base, config)
        for ours in (in_c, by_re):
            assert ours.text == theirs.text and ours.data == theirs.data
            n = len(ours.text)
            for i in range(n + 1):
                for j in range(i, min(n, i + 3) + 1):
                    assert ours.raw_span(i, j) == theirs.raw_span(i, j)


def test_the_c_skip_run_finder_on_long_texts_of_every_string_kind() -> None:
    """Hundreds of edits (the edit buffer grows), long space runs, and texts whose widest character is ASCII,
    Latin-1, BMP or astral; a text whose only wide characters are removed comes back in the narrow kind."""
    from rules.normalize import _compact_re2, compact_of, lowered_of

    spaces = " " * 40
    units = (
        f"a.b  c{spaces}x-y ",  # ASCII
        f"a.b  c{spaces}x·y ñ-o ",  # Latin-1
        f"代 考.试 a.b  c{spaces}x·y 中•文 ",  # BMP
        f"代 考.试 a.b{spaces}\U0001f600 中•文 ",  # astral
    )
    for unit in units:
        text = unit * 500
        base = base_view(text, CONFIG)
        ours, theirs = compact_of(base, CONFIG), _compact_re2(lowered_of(base), CONFIG)
        assert ours.text == theirs.text
        assert [ours.raw_span(i, i + 2) for i in range(0, 2000, 7)] == [
            theirs.raw_span(i, i + 2) for i in range(0, 2000, 7)
        ]
    for text, expected in (("a•b", "ab"), ("my·take", "mytake")):  # from UCS2 and from Latin-1 to ASCII
        only_removed = compact_view(text, CONFIG).text
        assert only_removed == expected and only_removed.isascii()


def test_the_c_skip_run_finder_rejects_bad_arguments_and_passes_on_errors() -> None:
    from rules import _compact

    with pytest.raises(TypeError):
        _compact.compact(b"a.b", ".", 3, True, lambda c: True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        _compact.compact("a.b", ".", 3, True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        _compact.compact("a.b", ".", 3, True, None)  # type: ignore[arg-type]

    def broken(c: str) -> bool:
        raise LookupError(c)

    # "é" is neither an ASCII letter nor an ideograph: RE2 (here: `broken`) is asked, and its error surfaces.
    with pytest.raises(LookupError, match="é"):
        _compact.compact("é.b", ".", 3, True, broken)
    assert _compact.compact("é.b", ".", 3, True, lambda c: True) == ("éb", [1], [1], [1], [2])
    assert _compact.compact("é.b", ".", 3, True, lambda c: False) is None
    assert _compact.compact("plain text", ".", 3, True, broken) is None
