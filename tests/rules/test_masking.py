"""Masking formats per kind, the seed mask syntax, and properties: masked values never stay visible and
offsets always point at the raw text."""

from __future__ import annotations

import re
import unicodedata
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rules import masking
from rules.findings import Action
from rules.normalize import Views
from rules.pii import BUILTIN_SPECS, PiiDetector
from rules.policy import MaskSpec
from rules.pseudonym import PseudonymVault, canonical
from rules.scanner import Scanner
from tests.rules import values as v

SCANNER = Scanner.load()
DETECTOR = PiiDetector(BUILTIN_SPECS, {})  # every PII spec, no min_score


@pytest.mark.parametrize(
    ("value", "spec", "expected"),
    [
        ("110105199001011234", MaskSpec("keep", first=6, last=4), "110105********1234"),
        ("13812345678", MaskSpec("pattern", pattern="###****####"), "138****5678"),
        ("138-1234-5678", MaskSpec("pattern", pattern="###****####"), "138-****-5678"),
        ("+86 138 1234 5678", MaskSpec("pattern", pattern="###****####"), "+86 138 **** 5678"),
        ("4242424242424242", MaskSpec("pattern", pattern="****-****-****-####"), "****-****-****-4242"),
        ("4242 4242 4242 4242", MaskSpec("pattern", pattern="****-****-****-####"), "****-****-****-4242"),
        ("110105199001011234", MaskSpec("pattern", pattern="****-****-****-####"), "******-****-****-1234"),
        ("378282246310005", MaskSpec("pattern", pattern="****-****-****-####"), "***-****-****-0005"),
        ("zhang.san@example.com", MaskSpec("email"), "z***@example.com"),
        ("AKIAIOSFODNN7EXAMPLE", MaskSpec("replace", text="[REDACTED]"), "[REDACTED]"),
        ("12", MaskSpec("keep", first=6, last=4), "**"),
    ],
)
def test_mask_formats(value: str, spec: MaskSpec, expected: str) -> None:
    assert masking.mask_value(value, spec) == expected


def test_default_masks_in_a_sentence() -> None:
    text = f"身份证{v.ID_18}，手机13812345678，邮箱zhang.san@example.com"
    out = masking.apply(text, SCANNER.scan(text), None)
    assert out == "身份证110105********002X，手机138****5678，邮箱z***@example.com"


@pytest.mark.parametrize(("text", "expected"), [
    # The embedded IPv4 address is part of the IPv6 one: masked whole, not as "::****:***.0.2.33".
    ("src ::ffff:192.0.2.33 dropped", "src ::****:***.*.*.** dropped"),
    ("地址是２００１：ｄｂ８：：１谢谢", "地址是****：***：：*谢谢"),
    ("ip:fe80::1", "ip:****::*"),
])
def test_ipv6_is_masked_whole(text: str, expected: str) -> None:
    assert masking.apply(text, SCANNER.scan(text), None) == expected


def test_block_and_annotate_leave_text_alone() -> None:
    text = "找人代考"
    result = SCANNER.scan(text)
    assert result.action is Action.BLOCK
    assert masking.apply(text, result, None) == text


def test_written_forms_of_a_mobile_number_share_a_pseudonym(tmp_path: Path) -> None:
    rule = tmp_path / "p.yaml"
    rule.write_text("- {rule: CHN_MOBILE, action: pseudonymize}\n", "utf-8")
    scanner = Scanner.load([rule])
    vault = PseudonymVault()
    text = "打(138) 1234 5678、138.1234.5678、+86 138-1234-5678或13812345678，不是139.1234.5678"
    out = masking.apply(text, scanner.scan(text), vault)
    assert out == "打<CN_MOBILE_1>、<CN_MOBILE_1>、<CN_MOBILE_1>或<CN_MOBILE_1>，不是<CN_MOBILE_2>"
    first = "(138) 1234 5678"
    assert vault.restore(out) == f"打{first}、{first}、{first}或{first}，不是139.1234.5678"


def test_pseudonymize_uses_the_vault(tmp_path: Path) -> None:
    rule = tmp_path / "p.json"
    rule.write_text('{"rule": "CHN_MOBILE", "action": "pseudonymize"}', "utf-8")
    scanner = Scanner.load([rule])
    vault = PseudonymVault()
    text = "打13812345678或者138 1234 5678，不是13912345678"
    out = masking.apply(text, scanner.scan(text), vault)
    assert out == "打<CN_MOBILE_1>或者<CN_MOBILE_1>，不是<CN_MOBILE_2>"
    assert vault.restore(out) == "打13812345678或者13812345678，不是13912345678"


PII_VALUES = st.sampled_from(
    [v.ID_18, v.ID_18B, v.VISA, v.UNIONPAY_19, "13812345678", "zhang.san@example.com", v.USCC, v.IBAN_GB,
     "078-05-1120", "AKIAIOSFODNN7EXAMPLE", v.fullwidth("13912345678"), "192.168.10.20"]
)
FILLER = st.text(alphabet=st.sampled_from(list("的了是在我有他这 ,.，。abcXYZ-_\n")), max_size=12)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(FILLER, PII_VALUES), min_size=1, max_size=5), FILLER)
def test_masking_never_leaves_a_listed_value_visible(parts: list[tuple[str, str]], tail: str) -> None:
    text = "".join(f"{filler} {value} " for filler, value in parts) + tail
    result = SCANNER.scan(text)
    masked = masking.apply(text, result, None)
    for _, value in parts:
        assert value not in masked
    for f in result.findings:
        # offsets are Python string indices into the raw text and cover a listed value exactly
        assert 0 <= f.start < f.end <= len(text)
        assert text[f.start : f.end] in {value for _, value in parts}


# -- overlapping findings -------------------------------------------------------------------------------------

ID = "110105199003071239"


@pytest.mark.parametrize(("text", "expected"), [
    # An ID that starts an e-mail address: each format alone shows what the other hides (the ID's 10 of its
    # digits, the e-mail's the rest of the local part); together, the local part is hidden whole.
    (f"{ID}.wang@example.org", "******************.****@example.org"),
    (f"m-{ID}-{v.UNIONPAY_19}-name@example.org", "*-******************-*******************-****@example.org"),
    ("a@13812345678.cn", "*@138****5678.cn"),  # the phone number in the domain the e-mail format keeps
    (f"IBAN {v.spaced('IT84Q1350571110659448951933', (4, 4, 4, 4, 4, 4))}",  # digits that read as a phone
     "IBAN IT84 **** **** **** **** ***1 933"),
    ("::ffff:192.0.2.33 dropped", "::****:***.*.*.** dropped"),
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz@example.org", "key [REDACTED]@example.org"),  # a secret's run
])
def test_overlapping_findings_are_masked_as_one_region(text: str, expected: str) -> None:
    assert masking.apply(text, SCANNER.scan(text), None) == expected


def test_an_exact_duplicate_keeps_the_format_of_the_stronger_reading() -> None:
    # An ID that is also a Luhn-valid card number: one value, masked as the ID it is.
    assert v.luhn_complete("45132219951001408") == "451322199510014083"
    text = "身份证451322199510014083"
    assert masking.apply(text, SCANNER.scan(text), None) == "身份证451322********4083"


@pytest.fixture(scope="module")
def pseudonymizing(tmp_path_factory: pytest.TempPathFactory) -> Scanner:
    """Every PII rule pseudonymizes."""
    rules = [e.rule for e in SCANNER.rules.entries if e.type == "pii"]
    path = tmp_path_factory.mktemp("rules") / "pseudonymize.yaml"
    path.write_text("".join(f"- {{rule: {rule}, action: pseudonymize}}\n" for rule in rules), "utf-8")
    return Scanner.load([path])


def test_overlapping_pseudonyms_restore_the_region(pseudonymizing: Scanner) -> None:
    vault = PseudonymVault()
    text = f"mail {ID}.wang@example.org or {ID}"
    out = masking.apply(text, pseudonymizing.scan(text), vault)
    # The ID's run and the rest of the e-mail address each get a placeholder; the lone ID is the same value.
    assert out == "mail <CN_RESIDENT_ID_1><EMAIL_1> or <CN_RESIDENT_ID_1>"
    assert vault.restore(out) == text


def test_a_pseudonym_overlapping_a_mask(tmp_path: Path) -> None:
    rule = tmp_path / "p.yaml"
    rule.write_text("- {rule: CHN_MOBILE, action: pseudonymize}\n", "utf-8")
    scanner = Scanner.load([rule])
    vault = PseudonymVault()
    text = "13812345678.wang@example.org，13912345678"
    out = masking.apply(text, scanner.scan(text), vault)
    assert out == "<CN_MOBILE_1>.****@example.org，<CN_MOBILE_2>"
    assert vault.restore(out) == "13812345678.****@example.org，13912345678"  # masked stays masked


# Texts of units: values, values made to overlap (inside or around an e-mail address, two in one), and filler,
# each followed by a separator or glued to the next unit (`_join`). A glued unit starts where a value ends:
# it is judged as if at the start of the text (rules/pii.py), so masking its neighbour (`**.*.*.*E12345678`)
# uncovers nothing. Some seams are left out because the concatenation itself has more than one reading, and
# no detector can tell where one value ends (`_ambiguous`).
_DIGITS = "0123456789"


def _digits(n: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=_DIGITS, min_size=n, max_size=n)


_IDS = st.builds(
    lambda region, day, seq: v.resident_id(region + day.strftime("%Y%m%d") + seq),
    st.sampled_from(["110105", "440304", "310101", "510104"]),
    st.dates(date(1940, 1, 1), date(2012, 12, 31)), _digits(3),
)
_CARDS = st.builds(lambda prefix, body: v.luhn_complete(prefix + body),
                   st.sampled_from(["622202", "424242", "535353", "3530"]),
                   st.integers(9, 12).flatmap(_digits))
_MOBILES = st.builds(
    lambda head, body, form: form.format(head, body[:4], body[4:]),
    st.sampled_from(["138", "139", "150", "186", "199"]), _digits(8),
    st.sampled_from(["{}{}{}", "+86 {} {} {}", "({}) {}-{}", "0086{}{}-{}", "{}.{}.{}"]),
)
_LOCAL = st.text(alphabet="abcxyz0189._-", min_size=1, max_size=8).filter(lambda s: s[0].isalnum())
_EMAILS = st.builds(lambda local, domain: f"{local}@{domain}", _LOCAL,
                    st.sampled_from(["example.org", "163.com", "qq.com", "mail.example.cn"]))
_VALUES = st.one_of(
    _IDS, _CARDS, _MOBILES, _EMAILS,
    st.sampled_from([v.ID_18, v.ID_15, v.VISA, v.AMEX, v.USCC, v.IBAN_GB, v.IBAN_DE, "078-05-1120",
                     "AKIAIOSFODNN7EXAMPLE", "192.168.10.20", "fe80::1", "::ffff:10.0.0.1", "京A12345", "E12345678",
                     v.fullwidth("13912345678"), v.spaced(v.VISA, (4, 4, 4))]),
)
_SEPARATORS = st.sampled_from(["，", "。", "\n", "; ", "、", " / ", "（", "）", " ", "", "", ""])
_FILLER = st.text(alphabet=st.sampled_from(list("的了是在我有 ,，。abcXYZ-_")), min_size=1, max_size=8)
_OVERLAPPING = st.one_of(
    st.builds(lambda value, tail: value + tail, _VALUES,
              st.sampled_from([".wang@example.org", "@163.com", "-name@example.org", "_x@qq.com"])),
    st.builds(lambda head, value, tail: head + value + tail, st.sampled_from(["a@", "wang@mail.", "a@b-", "x."]),
              _VALUES, st.sampled_from([".cn", ".example.org", "@qq.com"])),
    st.builds(lambda a, b, glue: f"m-{a}{glue}{b}-name@example.org", _VALUES, _VALUES, st.sampled_from(["-", "_"])),
    st.builds(lambda a, b: f"{a}@{b}", _EMAILS, _EMAILS),  # two addresses sharing the middle part
)


def _ascii_class(c: str) -> str:
    return "digit" if c.isascii() and c.isdigit() else "letter" if c.isascii() and c.isalpha() else "other"


def _ambiguous(left: str, sep: str, right: str) -> bool:
    """Whether `left + sep + right` has another reading than the two units (see `_join`)."""
    left, right = unicodedata.normalize("NFKC", left), unicodedata.normalize("NFKC", right)
    a, b = _ascii_class(left[-1]), _ascii_class(right[0])
    if sep == "":
        # Two digit values glued together are one longer number as much as two (13812345678110105...);
        # letters glued to letters go on as one word (an e-mail's TLD takes them: a@b.cnE12345678); a value
        # written in letters and digits (USCC, IBAN, access key, passport) goes on with either
        # (91350100M00010006A6222...); an IPv6 address takes the letters and digits next to its colons
        # (110105...0008::ffff:10.0.0.1); an e-mail address's local part takes what can be part of one
        # (fe80::1x@163.com), up to 64 characters: longer, it is no address until masking cuts it.
        alnum = {"digit", "letter"}
        tail = re.search("[0-9A-Za-z]+$", left)
        mixed = tail is not None and re.search("[A-Za-z][0-9]", tail.group()) is not None
        local = bool(re.match("[0-9A-Za-z._%+-]*@", right)) and (a != "other" or left[-1] in "._%+-")
        colon = ":" in (left[-1], right[0]) and bool({a, b} & alnum)
        return a == b != "other" or (mixed and b in alnum) or colon or local
    # A space between numbers in groups of four is one more group (4242 4242 4242 4242 4242 ...).
    return sep == " " and a == "digit" and re.match("[0-9]{4}(?![0-9])", right) is not None


def _join(units: list[tuple[str, str]]) -> str:
    """The units with their separators; where a separator would make the text ambiguous, a comma instead."""
    out = []
    for (unit, sep), (after, _) in zip(units, [*units[1:], ("，", "")], strict=True):
        out.append(unit + ("，" if _ambiguous(unit, sep, after) else sep))
    return "".join(out)


_TEXTS = st.lists(st.tuples(st.one_of(_VALUES, _OVERLAPPING, _FILLER), _SEPARATORS), min_size=1, max_size=6).map(_join)


def _pii_spans(scanner: Scanner, text: str) -> list[tuple[int, int]]:
    """Spans of every PII finding in `text`, covered ones included."""
    result = scanner.scan(text)
    return [(d.finding.start, d.finding.end) for d in (*result.decisions, *result.covered)
            if d.finding.category in ("pii", "secret")]


@settings(max_examples=400, deadline=None)
@given(_TEXTS)
def test_after_masking_no_detector_finds_anything(text: str) -> None:
    result = SCANNER.scan(text)
    masked = masking.apply(text, result, None)
    assert _pii_spans(SCANNER, masked) == [], (text, masked)
    # Nor does any detector below its rule's min_score.
    assert DETECTOR.detect_views(Views(masked, SCANNER.config)) == [], (text, masked)
    spans = _pii_spans(SCANNER, text)
    assert all(0 <= s < e <= len(text) for s, e in spans)
    # Outside the union of the findings' spans, the text is as it was: each region became something non-empty.
    pattern = "(.+?)".join(re.escape(run) for run in _outside(text, spans))
    assert re.fullmatch(pattern, masked, re.DOTALL), (text, masked)


def _outside(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """The runs of `text` outside the union of `spans`: before the first region (maybe empty), between two
    regions, after the last (maybe empty)."""
    runs, pos = [], 0
    for start, end in sorted(spans):
        if start >= pos:
            runs.append(text[pos:start])
        pos = max(pos, end)
    runs.append(text[pos:])
    return runs


@settings(max_examples=200, deadline=None)
@given(_TEXTS)
def test_pseudonyms_restore_overlapping_values(pseudonymizing: Scanner, text: str) -> None:
    vault = PseudonymVault()
    out = masking.apply(text, pseudonymizing.scan(text), vault)
    assert _pii_spans(pseudonymizing, out) == [], (text, out)
    # Forms of a value that differ in separators (a mobile number's also in its country code, parentheses and
    # dots) share a placeholder, restored as the first one seen.
    assert _MOBILE_FORM.sub("", canonical(vault.restore(out))) == _MOBILE_FORM.sub("", canonical(text))


_MOBILE_FORM = re.compile(r"\(\+?86\)|\+86|0086|[().]")
