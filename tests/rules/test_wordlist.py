"""Word lists: one pass, categories, ASCII boundaries, allow-list, skip characters, stream viability."""

from __future__ import annotations

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import wordlist
from rules.normalize import NormalizeConfig, Views, compact_view
from rules.wordlist import WordListDetector, WordRule

CONFIG = NormalizeConfig()
RULES = [
    WordRule("exam", "exam_fraud", ("代考", "替考", "枪手", "take my exam"), allow=("枪手机",)),
    WordRule("drugs", "drugs", ("冰毒", "ass", "Meth")),
]
DET = WordListDetector(RULES, CONFIG)


def found(text: str) -> list[tuple[str, str, str]]:
    return [(f.rule, f.category, text[f.start : f.end]) for f in DET.detect_views(Views(text, CONFIG))]


def test_words_are_found_with_their_rule_and_category() -> None:
    assert found("我想找人代考，顺便买点冰毒") == [("exam", "exam_fraud", "代考"), ("drugs", "drugs", "冰毒")]


def test_obfuscations_are_seen_through() -> None:
    for text in ("代*考", "代 考", "代-考", "代\u200b考", "代 * 考", "ＴＡＫＥ  my\nEXAM", "替考", "M.E.T.H"):
        assert len(found(text)) == 1, text
        assert found(text)[0][2] == text


def test_traditional_chinese_matches_simplified_words() -> None:
    assert found("他賣冰毒") == [("drugs", "drugs", "冰毒")]


def test_latin_words_need_word_boundaries() -> None:
    assert found("a class of assets") == []
    assert found("what an ass!") == [("drugs", "drugs", "ass")]
    assert found("methane") == []


def test_allow_list_suppresses_benign_phrases() -> None:
    assert found("我买了一个枪手机壳") == []
    assert found("他是个枪手") == [("exam", "exam_fraud", "枪手")]


def test_empty_list_finds_nothing() -> None:
    det = WordListDetector([], CONFIG)
    assert det.detect_views(Views("代考", CONFIG)) == []
    assert len(det) == 0


def test_large_list_compiles_and_matches() -> None:
    words = tuple(f"词{i:05d}" for i in range(10_000))
    det = WordListDetector([WordRule("big", "big", words)], CONFIG)
    assert len(det) == 10_000
    hits = det.detect_views(Views("前缀词04321后缀", CONFIG))
    assert [(f.start, f.end) for f in hits] == [(2, 8)]


def test_viable_start_holds_back_only_a_possible_word_start() -> None:
    def hold(tail: str) -> str:
        view = compact_view(tail, CONFIG)
        return view.text[DET.viable_start(view) :]

    assert hold("我想找人代") == "代"
    assert hold("我想找人代 ") == "代 "
    assert hold("hello world") == ""
    assert hold("please take my ex") == "take my ex"
    assert hold("枪手") == "枪手"  # a whole word is held: it might grow into the allowed 枪手机


def test_aho_corasick_and_re2_engines_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    words = (*(f"词{i}" for i in range(50)), "代考", "代考机构", "考机", "take my exam", "exam", "my")
    words = (*words, "ab", "abc", "bcd")
    rules = [WordRule("w", "c", words, allow=("代考机构地址",))]
    texts = ["找代考机构", "代考机构地址在哪", "take my exam now", "abcd bcd ab", "词1词12词123", "x代考考机"]
    monkeypatch.setattr(wordlist, "AHO_THRESHOLD", 10**9)
    re2_engine = WordListDetector(rules, CONFIG)
    monkeypatch.setattr(wordlist, "AHO_THRESHOLD", 0)
    aho_engine = WordListDetector(rules, CONFIG)
    for text in texts:
        views = Views(text, CONFIG)
        assert re2_engine.detect_views(views) == aho_engine.detect_views(views), text


def test_prefilter_is_built_for_small_lists_only(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DET._prefilter is not None
    monkeypatch.setattr(wordlist, "PREFILTER_MAX", 1)
    assert WordListDetector(RULES, CONFIG)._prefilter is None


def test_prefilter_skips_the_compact_view_only_when_nothing_can_match() -> None:
    views = Views("a perfectly ordinary sentence. 一句普通的话.", CONFIG)
    assert DET.detect_views(views) == []
    assert not views.has_compact
    views = Views("代**考", CONFIG)
    assert len(DET.detect_views(views)) == 1
    assert views.has_compact


# Words, separators the compact view drops or folds, filler, case and width changes.
_PIECES = st.sampled_from([
    "代", "考", "替", "枪", "手", "机", "冰", "毒", "take", "TAKE", "my", "ex", "am", "EXAM", "ass", "Meth", "m",
    "e", "t", "h", " ", "  ", "\n", "\t", "*", "-", ".", "·", "•", "_", "|", "/", "~", "+", "#", "\u200b", "ａ",
    "Ｍ", "x", "1", "的", "賣", "，", "İ", "I", "i", "Σ", "ς", "\u212a", "\r", "\f", "\v",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_prefilter_never_hides_a_finding(text: str) -> None:
    unfiltered = WordListDetector(RULES, CONFIG)
    unfiltered._prefilter = None
    assert DET.detect_views(Views(text, CONFIG)) == unfiltered.detect_views(Views(text, CONFIG))


def test_allow_pass_runs_only_for_words_inside_allow_phrases(monkeypatch: pytest.MonkeyPatch) -> None:
    assert DET._allowable == frozenset({"枪手".encode()})
    monkeypatch.setattr(wordlist, "ALLOW_PRECOMPUTE_MAX", 0)
    always = WordListDetector(RULES, CONFIG)
    assert always._allowable is None
    for text in ("我买了一个枪手机壳", "他是个枪手", "枪手机 and 代考", "代考"):
        assert always.detect_views(Views(text, CONFIG)) == DET.detect_views(Views(text, CONFIG)), text


def test_prefilter_sees_through_case_and_control_whitespace() -> None:
    det = WordListDetector([WordRule("w", "c", ("wi", "代考", "ok go"))], CONFIG)
    for text in ("WİX", "代\n考", "代\r\n考", "OK\tGO", "O\u212a GO"):
        unfiltered = WordListDetector([WordRule("w", "c", ("wi", "代考", "ok go"))], CONFIG)
        unfiltered._prefilter = None
        expected = unfiltered.detect_views(Views(text, CONFIG))
        assert expected, text
        assert det.detect_views(Views(text, CONFIG)) == expected, text


def test_lower_case_is_one_character_that_re2_folds_to_but_for_the_listed_few() -> None:
    opts = re2.Options()
    opts.case_sensitive = False
    expands = []
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        low = c.lower()
        if low == c:
            continue
        if len(low) != 1:
            expands.append(c)
        else:
            assert re2.fullmatch(re2.compile(re2.escape(low), opts), c), hex(cp)
    assert "".join(expands) == wordlist.LOWER_EXPANDS


_TAIL = re2.compile(f"(?:{DET.tail})\\z", wordlist.re2_options())


def _tail_hold(text: str) -> int:
    """Raw index where the base-view fuzzy tail starts holding back (len(text): nothing held)."""
    base = Views(text, CONFIG).base
    m = _TAIL.search(base.data)
    if m is None:
        return len(text)
    return base.raw_start(base.char_index(m.start()))


def _exact_hold(text: str) -> int:
    compact = Views(text, CONFIG).compact
    s = DET.viable_start(compact)
    return len(text) if s >= len(compact.text) else compact.raw_start(s)


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=14).map("".join))
def test_fuzzy_tail_holds_back_at_least_what_the_exact_check_does(text: str) -> None:
    assert _tail_hold(text) <= _exact_hold(text)


def test_fuzzy_tail_examples() -> None:
    assert DET.tail is not None
    for text, held in [("我想找人代", "代"), ("我想找人代 ", "代 "), ("please TAKE my Ex", "TAKE my Ex"),
                       ("hello world", ""), ("代**", "代**"), ("买点冰", "冰"), ("ＭＥ", "ＭＥ")]:
        assert text[_tail_hold(text) :] == held, text


def test_no_fuzzy_tail_when_a_word_holds_a_combining_dot() -> None:
    assert wordlist.fuzzy_tail(["wi\u0307x"], CONFIG) is None
    assert WordListDetector([WordRule("w", "c", ("wi\u0307x",))], CONFIG).tail is None


# Without allow phrases, so every match is a finding; BIG is above AHO_THRESHOLD: the Aho-Corasick matcher.
_NO_ALLOW = [WordRule(r.rule, r.category, r.words) for r in RULES]
SMALL = WordListDetector(_NO_ALLOW, CONFIG)
BIG = WordListDetector([*_NO_ALLOW, WordRule("big", "big", tuple(f"词{i}" for i in range(2_100)))], CONFIG)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=20).map("".join))
def test_finding_spans_map_like_their_byte_spans(text: str) -> None:
    """detect_views turns the matches' byte offsets into characters in one pass over the hits: each span is the
    one View.raw_span_bytes gives for some match."""
    for det in (SMALL, BIG):
        views = Views(text, CONFIG)
        spans = {views.compact.raw_span_bytes(s, e) for s, e, _ in det._words.matches(views.compact)}
        assert {(f.start, f.end) for f in det.detect_views(views)} <= spans  # boundaries drop some ("takeass")


@pytest.mark.parametrize("det", [SMALL, BIG], ids=["re2", "aho-corasick"])
def test_finding_spans_after_multibyte_text(det: WordListDetector) -> None:
    text = "é代 考，ｍｅｔｈ和冰毒 take  my exam"
    found = [(f.start, f.end, text[f.start:f.end]) for f in det.detect_views(Views(text, CONFIG))]
    assert found == [(1, 4, "代 考"), (5, 9, "ｍｅｔｈ"), (10, 12, "冰毒"), (13, 26, "take  my exam")]
