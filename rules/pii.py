"""PII and secret detectors: one RE2 pattern plus a tri-state validator per kind (DESIGN section 3).

All patterns run over the base view's UTF-8 bytes, first as one `re2.Set` prefilter pass (with the right
boundaries too, so a 9-digit SSN candidate is not reported for every longer digit run), then only the
patterns the Set reported are iterated, calling RE2's matcher directly. Bytes, not str: the google-re2
wrapper re-encodes a str and maps offsets back on every call (measured on 1 KB mixed text: an alternation
search 6.7 us on str vs 3.7 us on bytes; the wrapper's finditer generator cost more than matching itself on
PII-dense text); byte offsets become character offsets only for findings, from the nearest checkpoint.
RE2's `\\b` fires between a CJK character and a digit, so every
numeric kind uses explicit classes instead: the character before a value must not be a digit (it is
consumed by `(?:^|[^0-9])`), the character after is checked here, unconsumed, so two values separated by
one character are both found. An 18-digit ID inside a 25-digit order number is therefore no ID.
A value that starts right where a found one ends is judged as if the text started there (`_glued`): the
character before it is the other value's, not part of a longer token, and masking that value (`**.*.*.*`,
`[REDACTED]`) would otherwise uncover it in the output: `10.0.0.1E12345678` is an address and a passport.
A pattern ending in optional groups yields its longest candidate; the kind's `ends` says which shorter
ones to try too, and in which order (a card's 16-digit grouping first when its optional last group reads as
the next number's first digits); the first that passes its checks is the value, and each must match the
pattern whole.
Context words just before a value raise its score; negative ones ("订单号", "version") lower it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

import re2

from rules import checksums, names
from rules.checksums import FULLWIDTH_COLON
from rules.findings import Finding, new_finding
from rules.normalize import (
    _ANCHOR_BOTH,
    _ANCHOR_START,
    _UNANCHORED,
    SET_SENTINEL,
    View,
    Views,
    set_hits,
    utf8_chars,
)
from rules.prefix import max_width, prefix_closure

Validator = Callable[[str], bool | None]
# For a match data[start:end] of a pattern ending in optional groups: the ends of the candidates to try, in
# order, the match's own end among them; any other must leave a candidate that matches the pattern whole.
Ends = Callable[[bytes, int, int], tuple[int, ...]]

CONTEXT_WINDOW = 24  # characters before a value searched for context words
NEGATIVE_WINDOW = 12  # negative words must sit right before the value ("订单号：...", "order no. ...")

_DIGIT = b"0123456789"
_by_start = itemgetter(1)
_ALPHA = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_ALNUM = _DIGIT + _ALPHA


def re2_options(*, longest: bool = False) -> re2.Options:
    opts = re2.Options()
    opts.max_mem = 64 << 20  # below ~64 MiB big Sets fall off the DFA and run ~100x slower (FACTS)
    opts.log_errors = False
    opts.longest_match = longest
    return opts


@dataclass(frozen=True, slots=True)
class PiiSpec:
    """One detector: `value` is the RE2 pattern of the value itself; `left`/`right` are byte classes that
    must not touch it; `strip` characters (separators) are removed before the validator sees the value."""

    name: str
    kind: str
    value: str
    max_len: int
    validator: Validator | None = None
    category: str = "pii"
    left: bytes = _DIGIT
    right: bytes = _DIGIT
    strip: str = " -"
    score: float = 0.9
    context: tuple[str, ...] = ()
    negative: tuple[str, ...] = ()
    prefix: str = ""  # RE2 that must precede the value but is not part of it ("Bearer ")
    suffix: str = ""  # RE2 that must follow the value but is not part of it ("先生" after a name)
    # RE2 for the Set pass instead of the pattern: a superset of its matches in any text, much smaller (a
    # name's cue alone): the names' and addresses' Han classes made the Set's automaton several times bigger,
    # and it is evicted from the caches between texts (see `prefilter`).
    gate: str = ""
    ends: Ends | None = None  # the candidates tried at a match (see `Ends`); None: the match alone
    # Specs of one `group` (consecutive in BUILTIN_SPECS, same `left`) are searched as ONE RE2 pattern, an
    # alternation with a capture group per spec (`PiiDetector`): one pass over the text where any of their
    # gates fired. Worth it where the specs share their gate and most of their pattern (the two Chinese
    # address forms: 6.5 us per 1 KB text instead of 7.7 in bench.scan); not for the three name cues (their
    # alternation searched 18.7 us per text where the three patterns, each only where its gate fired, 14).
    group: str = ""
    # RE2 of the text after a value that `ends` reads beyond its first character: a stream holds a value
    # back until that text is complete (its prefix closure is the value's followed by this one's).
    lookahead: str = ""
    no_dot_digit: bool = False  # "1.2.3.4.5" is no IPv4 address, but "at 10.0.0.1." is
    not_in_token: bool = False  # reject a value glued to ASCII letters/digits on both sides (X1380..D5U)
    # A rejected match may hide a value that starts inside it: search again from its second character, not
    # from its end (optional separators between groups: "182 17780129" of "...5032 182 17780129323").
    rescan: bool = False
    # Matches may overlap ("a@b.cn.c@d.cn": the second address starts right after the first's "@"), when the
    # match is followed by one of `overlap_after` (a character the pattern could go on with): then search again
    # from just after its start, not from its end.
    overlap_after: bytes = b""
    score_fn: Callable[[str], float] | None = field(default=None)

    @property
    def pattern(self) -> str:
        if not self.left:
            return f"{self.prefix}({self.value}){self.suffix}"
        cls = "".join(f"\\x{{{b:02x}}}" for b in sorted(set(self.left)))
        return f"(?:^|[^{cls}]){self.prefix}({self.value}){self.suffix}"

    @property
    def prefilter(self) -> str:
        """The pattern with its right boundary too, for the Set pass only: the Set needs no spans, so it may
        consume the boundary, and it then stops reporting a 9-digit SSN for every longer digit run."""
        if self.gate:
            return self.gate
        if not self.right:
            return self.pattern
        cls = "".join(f"\\x{{{b:02x}}}" for b in sorted(set(self.right)))
        return f"{self.pattern}(?:[^{cls}]|$)"


# The gate of a group's spec that the group's first spec's gate answers for (the same, or a superset): a
# pattern that matches no text, so the Set does not carry the same gate twice (~1.4 us per 1 KB text).
GROUP_GATE = "[^\\x00-\\x{10FFFF}]"


def _iban_groups(data: bytes, start: int, end: int) -> tuple[int, ...]:
    """The match, then without its last space-separated groups one by one: an IBAN's length comes from its
    country and mod 97, not from where the groups stop (a word in capitals after it reads as one more)."""
    return (end, *(i for i in range(end - 1, start, -1) if data[i] == 0x20))


def _name_ends(data: bytes, start: int, end: int) -> tuple[int, ...]:
    """The match, then shorter: without its last words one by one (a capitalised word after a name, "Attn:
    Jane Doe Thanks"), or a Chinese name without its last character ("户名潘刚谢谢": the pattern reads any
    Han character as a given name's, the validator refuses 谢, rules/names.py)."""
    if data[end - 1] >= 0x80:
        return (end, end - 3) if end - start >= 9 else (end,)
    return (end, *(i for i in range(end - 1, start, -1) if data[i] == 0x20))


_COLON_BYTES = FULLWIDTH_COLON.encode()


def _ipv6_colon(data: bytes, start: int, end: int) -> tuple[int, ...]:
    """The match, then without a trailing full-width colon: "...3300::：请核查", the sentence's colon."""
    return (end, end - len(_COLON_BYTES)) if data.endswith(_COLON_BYTES, start, end) else (end,)


_GROUPED_16 = 19  # "4242 4242 4242 4242"
# What `_card_groups` reads after the 16-digit grouping: a run of up to 5 digits, or 1-3 of them, a separator
# and up to 5 more (the run after it is 4 digits long or not).
_CARD_LOOKAHEAD = "(?:[ -](?:[0-9]{5}|[0-9]{1,3}[ ./-][0-9]{5}))?"
_CARD_SEP = b" -"
_NUMBER_SEP = b" -./"  # between the groups of a number written after a card: "138 1234 5678", "12/27"
_DIGIT_RUN = re.compile(b"[0-9]*")


def _card_groups(data: bytes, start: int, end: int) -> tuple[int, ...]:
    """A card written 4-4-4-4 with an optional last group of 1-3 digits (the 4-4-4-4-3 layout of 19-digit
    cards): which of the match and its 16-digit grouping to try, by what follows the group.

    Digits right after it: the group took the first digits of a longer number (an ID, a mobile number), the
    match fails its boundary and the 16-digit grouping is tried. A separator and more digits: the group
    may be either number's; when a group of four follows, the group leads that number ("137 4386 5508") and
    the 16-digit grouping is tried first, else the match ("...0860 397 13095403152"; expiry "12/27" when the
    match fails Luhn). Nothing numeric after the group: the match alone (a 19-digit card failing Luhn holds
    no 16-digit card); nor where groups of four go on (a longer number in groups: 4242 4242 4242 4242 4242)."""
    cut = start + _GROUPED_16
    if end <= cut or data[start + 4] not in _CARD_SEP or data[cut] not in _CARD_SEP:
        return (end,)  # a run of digits, or no separate last group: a shorter reading would end inside digits
    group_end = _digit_run_end(data, cut + 1)
    group = group_end - cut - 1
    if group == 4:
        return (end,)
    if group > 4:
        return (end, cut)
    if not (data[group_end : group_end + 1] and data[group_end] in _NUMBER_SEP
            and data[group_end + 1 : group_end + 2].isdigit()):
        return (end,)
    return (cut, end) if _digit_run_end(data, group_end + 1) - group_end - 1 == 4 else (end, cut)


def _digit_run_end(data: bytes, pos: int) -> int:
    return _DIGIT_RUN.match(data, pos).end()  # type: ignore[union-attr]  # `*` always matches


def _landline_extension(data: bytes, start: int, end: int) -> tuple[int, ...]:
    """The match, then without its extension when that took the first digits of a longer number
    ("010-62345678-13812345678")."""
    return (end, data.rfind(b"-", start, end)) if data[end : end + 1].isdigit() else (end,)


_NEG_NUMBER = ("订单", "单号", "编号", "流水", "序列号", "order", "tracking", "invoice", "serial", "ref")
_D = "[0-9]"
_DATE8 = "(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
_DATE6 = "[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])"
_USCC = "[0-9A-HJ-NPQRTUWXY]"
_OCTET = "[0-9]{1,3}"
_HEX = "[0-9A-Fa-f]"
_COLON = f"[:{FULLWIDTH_COLON}]"
# Country code of a mobile number, bare or in parentheses (full-width ones too: normalization keeps them).
_CN_CC = "(?:(?:\\+|00)86|[(（]\\+?86[)）])"
# Between a mobile number's groups: a space (NFKC folds the ideographic one), a hyphen-minus (and the
# full-width and small ones), or U+2010-U+2015, hyphens and dashes that normalization keeps. Literal, not
# \x{...}: the prefix closures are parsed with Python's re (rules/prefix.py).
_MOBILE_SEP = "[ \\-\u2010-\u2015]"
# A passport number's label, up to where the number starts: "passport no. ", "Passport Number: ", "passport #",
# "护照号码：", "护照号是".
_PASSPORT_LABEL = (
    "(?:(?i:passport)(?: ?(?i:no|num|number|nr|#)\\.?)?(?: (?i:is))?|护照(?:号码|号|编号)?(?:是|为)?)"
    f" ?(?:{_COLON}|#)? ?"
)
_ID_CONTEXT = ("身份证", "证件号", "身份号", "id card", "identity", "公民身份")
_MOBILE_CONTEXT = ("手机", "电话", "联系", "致电", "mobile", "phone", "tel", "call", "微信")


def _ssn_score(digits: str) -> float:
    # A bare nine-digit run is most often something else; with dashes it reads as an SSN.
    return 0.9 if not digits.isdigit() else 0.4


BUILTIN_SPECS: tuple[PiiSpec, ...] = (
    PiiSpec(
        "cn_resident_id", "cn_resident_id",
        f"[1-9][0-9]{{5}}[ -]?{_DATE8}[ -]?[0-9]{{4}}|[1-9][0-9]{{5}}{_DATE6}[0-9]{{3}}",
        not_in_token=True,
        max_len=20, validator=checksums.cn_resident_id, score=0.95,
        context=_ID_CONTEXT, negative=_NEG_NUMBER,
    ),
    PiiSpec(
        # Ending in its check letter X, an ID's digit run has ended: digits right after it are the next
        # value's (11010519491231002X6222...), letters still glue it into a token. A spec of its own for
        # that boundary.
        "cn_resident_id.x", "cn_resident_id",
        f"[1-9][0-9]{{5}}[ -]?{_DATE8}[ -]?[0-9]{{3}}[Xx]",
        not_in_token=True,
        max_len=20, validator=checksums.cn_resident_id, score=0.95, right=_ALPHA,
        context=_ID_CONTEXT, negative=_NEG_NUMBER,
    ),
    PiiSpec(
        "bank_card", "bank_card",
        "[0-9]{15,19}|[0-9]{4}(?:[ -][0-9]{4}){3}(?:[ -]?[0-9]{1,3})?|3[47][0-9]{2}[ -][0-9]{6}[ -][0-9]{5}",
        not_in_token=True, ends=_card_groups, lookahead=_CARD_LOOKAHEAD,
        max_len=23, validator=checksums.bank_card, score=0.9, right=_DIGIT + b"Xx",
        context=("卡号", "银行卡", "信用卡", "储蓄卡", "card", "visa", "mastercard", "银联"),
        negative=_NEG_NUMBER,
    ),
    PiiSpec(
        # 3-4-4 digits, each group boundary with one optional separator, the first group and the country
        # code optionally in parentheses: "+86 (138) 1234 5678", "(+86) 138-1234-5678", "1381234 5678".
        "cn_mobile", "cn_mobile",
        f"(?:{_CN_CC}{_MOBILE_SEP}?)?(?:1[3-9][0-9]|[(（]1[3-9][0-9][)）])(?:{_MOBILE_SEP}?[0-9]{{4}}){{2}}",
        not_in_token=True, rescan=True,
        max_len=21, left=_DIGIT + b"+", score=0.85,
        context=_MOBILE_CONTEXT, negative=_NEG_NUMBER,
    ),
    PiiSpec(
        # Dots only as exactly 3.4.4 groups, with nothing dotted or numeric glued on either side, and no ASCII
        # letter before it: decimals and versions ("139.12345678", "v1.138.1234.5678", "138.1234.5678.9",
        # "v138.1234.5678") are no numbers. A spec of its own for those boundaries.
        "cn_mobile.dotted", "cn_mobile",
        f"(?:{_CN_CC} ?)?1[3-9][0-9]\\.[0-9]{{4}}\\.[0-9]{{4}}",
        not_in_token=True, no_dot_digit=True,
        max_len=19, left=_ALNUM + b"+.", score=0.85,
        context=_MOBILE_CONTEXT, negative=_NEG_NUMBER,
    ),
    PiiSpec(
        "cn_landline", "cn_landline",
        "(?:\\(0(?:10|2[0-9])\\)|0(?:10|2[0-9]))[ -]?[2-9][0-9]{7}(?:-[0-9]{1,4})?"
        "|(?:\\(0[3-9][0-9]{2}\\)|0[3-9][0-9]{2})[ -]?[2-9][0-9]{6,7}(?:-[0-9]{1,4})?",
        not_in_token=True, ends=_landline_extension,
        max_len=20, score=0.7,
        context=("电话", "座机", "固话", "传真", "联系", "tel", "phone", "fax"), negative=_NEG_NUMBER,
    ),
    PiiSpec(
        "cn_uscc", "cn_uscc", f"(?i:{_USCC}{{2}}[0-9]{{6}}{_USCC}{{10}})",
        max_len=18, validator=checksums.cn_uscc, left=_ALNUM, right=_ALNUM, strip="", score=0.9,
        context=("信用代码", "统一社会", "税号", "纳税人识别号", "营业执照", "uscc"),
        negative=("身份证", "证件号", "id card", "identity"),
    ),
    PiiSpec(
        # Ordinary (G, E + 8 digits, E + letter + 7 digits), diplomatic, service and public-affairs (D, S, P,
        # DE, SE, PE + 7 digits) PRC passports.
        "cn_passport", "cn_passport", "[EG][0-9]{8}|E[A-HJ-NP-Z][0-9]{7}|[DSP]E?[0-9]{7}",
        max_len=9, left=_ALNUM, right=_ALNUM, strip="", score=0.6,
        context=("护照", "passport", "证件"),
    ),
    PiiSpec(
        # HKSAR (H, K) and Macao SAR (M) passports: H/M + 8 digits is also a Home Return Permit's number
        # (hk_macau_permit), so these count only with the word passport just before them, which lifts them
        # over the rule's min_score and over the permit's reading of the same span (rules/scanner.py).
        "cn_passport.sar", "cn_passport", "[HKM][0-9]{8}",
        max_len=9, left=_ALNUM, right=_ALNUM, strip="", score=0.45,
        context=("护照", "passport"),
    ),
    PiiSpec(
        # Any other country's passport number, only after its label ("passport no.", "护照号码："): 6-9 capitals
        # and digits, at least two digits (not a word in capitals). A PRC form after the label is reported as
        # cn_passport too (same span), with the label as its context: that reading scores higher and wins.
        "passport", "passport", "[A-Z0-9]{6,9}", prefix=_PASSPORT_LABEL,
        max_len=9, validator=checksums.passport_number, left=_ALNUM, right=_ALNUM, strip="", score=0.7,
    ),
    PiiSpec(
        "hk_macau_permit", "hk_macau_permit", "C[0-9A-HJ-NP-Z][0-9]{7}|[HM][0-9]{8}(?:[0-9]{2})?",
        max_len=11, left=_ALNUM, right=_ALNUM, strip="", score=0.6,
        context=("通行证", "港澳", "回乡证", "permit"),
    ),
    # People's names and postal addresses: no checksum, found only by their cues (rules/names.py).
    PiiSpec("person_name.label", "person_name", names.NAME_AFTER_LABEL, prefix=names.NAME_LABEL,
            gate=names.NAME_LABEL_GATE,
            max_len=60, validator=names.name_words, left=_ALPHA, right=b"", strip="", score=0.8,
            ends=_name_ends),
    PiiSpec("person_name.title", "person_name", names.NAME_AFTER_TITLE, prefix=names.EN_TITLE, gate=names.EN_TITLE,
            max_len=60, validator=names.name_words, left=_ALPHA, right=b"", strip="", score=0.8,
            ends=_name_ends),
    PiiSpec("person_name.cue_after", "person_name", names.NAME, suffix=names.NAME_SUFFIX, gate=names.NAME_SUFFIX,
            max_len=60, validator=names.name_words, left=_ALPHA, right=b"", strip="", score=0.8),
    PiiSpec("postal_address.zh", "postal_address", names.ZH_ADDRESS, gate=names.ZH_ADDRESS_GATE, group="zh_address",
            max_len=80, left=b"", right=b"", strip="", score=0.8),
    PiiSpec("postal_address.zh_label", "postal_address", names.ZH_ADDRESS_LABELLED, prefix=names.ZH_ADDRESS_LABEL,
            gate=GROUP_GATE, group="zh_address",
            max_len=80, left=b"", right=b"", strip="", score=0.8),
    PiiSpec("postal_address.en", "postal_address", names.EN_ADDRESS, validator=names.street_address,
            max_len=120, left=_ALNUM, right=_ALNUM, strip="", score=0.8),
    PiiSpec(
        "cn_license_plate", "cn_license_plate",
        "[京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼][A-HJ-NP-Z][ ·・]?"
        "(?:[DF][A-HJ-NP-Z0-9][0-9]{4}|[0-9]{5}[DF]|[A-HJ-NP-Z0-9]{4}[A-HJ-NP-Z0-9挂学警])",
        max_len=9, validator=checksums.cn_license_plate, left=b"", right=_ALNUM, strip="", score=0.8,
        context=("车牌", "牌照", "plate"),
    ),
    PiiSpec(
        # Capped (DESIGN section 4): local part <= 64 (RFC 5321), domain <= 88, so a match is <= 153
        # characters and the stream hold-back stays bounded; longer addresses are not detected.
        "email", "email",
        "[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,61}[A-Za-z0-9])?\\.[A-Za-z]{2,24}",
        # A TLD has no digits: digits right after one start the next value (c@example.org4242424242424242).
        max_len=153, left=_ALNUM + b"._%+-", right=_ALPHA + b"-", strip="", score=0.95,
        # Past its "@", a match (accepted or not) is the start of another address's local part when what
        # follows it can go on with one ("@" included): not before a space, CJK text, punctuation or the end.
        overlap_after=_ALNUM + b"._%+-@",
        # In every match; the whole pattern in the Set cost ~14k instructions per 1 KB text (its DFA states).
        gate="@[A-Za-z0-9]",
    ),
    PiiSpec(
        "ipv4", "ipv4", f"{_OCTET}\\.{_OCTET}\\.{_OCTET}\\.{_OCTET}", not_in_token=True,
        max_len=15, validator=checksums.ipv4, left=_DIGIT + b".", strip="", score=0.8, no_dot_digit=True,
        context=("ip", "地址", "服务器", "server", "host"), negative=("version", "版本", "v.", "ver"),
    ),
    PiiSpec(
        # An address starts with a group or with "::", never with a lone colon, so a label glued to it by a
        # colon ("ip:fe80::1") is its left boundary, not part of it. The base view keeps the full-width colon
        # (Chinese punctuation, rules.normalize.KEEP), so it separates groups too: "２００１：ｄｂ８：：１".
        "ipv6", "ipv6",
        # It ends in a group, a dotted quad (tried first: "::ffff:1.2.3.4" is not "::ffff:1") or "::", never
        # in a lone colon, so "fe80::1：" (punctuation after it) is found too.
        f"(?:{_HEX}{{1,4}}{_COLON}|{_COLON}{_COLON})(?:{_HEX}{{0,4}}{_COLON}){{0,6}}"
        f"(?:{_OCTET}(?:\\.{_OCTET}){{3}}|{_HEX}{{1,4}}|{_COLON})",
        max_len=45, validator=checksums.ipv6, left=_ALNUM, right=_ALNUM + b":", strip="", score=0.85,
        ends=_ipv6_colon,
        # In every match (a group or a colon on both sides of a colon), for the Set pass: the whole pattern's
        # counted groups cost ~11k instructions per 1 KB text there.
        gate=f"(?:{_HEX}|{_COLON}){_COLON}(?:{_HEX}|{_COLON})",
    ),
    PiiSpec(
        "us_ssn", "us_ssn", "[0-9]{3}-[0-9]{2}-[0-9]{4}|[0-9]{3} [0-9]{2} [0-9]{4}|[0-9]{9}",
        not_in_token=True, max_len=11, validator=checksums.us_ssn, score=0.9, score_fn=_ssn_score,
        context=("ssn", "social security", "社会安全号"), negative=_NEG_NUMBER,
    ),
    PiiSpec(
        "iban", "iban", "[A-Z]{2}[0-9]{2}(?: ?[0-9A-Z]{4}){2,7}(?: ?[0-9A-Z]{1,3})?",
        max_len=42, validator=checksums.iban, left=_ALNUM, right=_ALNUM, strip=" ", score=0.95,
        ends=_iban_groups, context=("iban", "账户", "account"),
    ),
    PiiSpec(
        "secret.aws_access_key", "secret", "(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}",
        max_len=20, category="secret", left=_ALNUM, right=_ALNUM, strip="", score=0.95,
    ),
    PiiSpec(
        # RE2 repetition counts stop at 1000, so long tokens use `+` and `max_len` is enforced after the
        # match: a JWT longer than 4096 characters is not detected, which keeps the stream hold-back bounded.
        "secret.jwt", "secret", "eyJ[A-Za-z0-9_-]{7,}\\.eyJ[A-Za-z0-9_-]{7,}\\.[A-Za-z0-9_-]{8,}",
        max_len=4096, category="secret", left=_ALNUM + b"_-.", right=_ALNUM + b"_-", strip="", score=0.95,
    ),
    PiiSpec(
        # Up to 8192 characters from BEGIN to END (an RSA-4096 PEM is ~3,300).
        "secret.private_key", "secret",
        "-----BEGIN [A-Z0-9 ]{0,24}PRIVATE KEY-----[A-Za-z0-9+/=\\s:,-]*?"
        "-----END [A-Z0-9 ]{0,24}PRIVATE KEY-----",
        max_len=8192, category="secret", left=b"", right=b"", strip="", score=1.0,
    ),
    PiiSpec(
        "secret.bearer", "secret", "[A-Za-z0-9._~+/-]{16,}=*", prefix="(?i:bearer)[ ]+",
        max_len=600, category="secret", left=_ALNUM, right=_ALNUM + b"._~+/=-", strip="", score=0.9,
    ),
    PiiSpec(
        # GitHub (ghp_/gho_/ghu_/ghs_/ghr_, github_pat_), Slack, OpenAI/Anthropic-style sk- keys, Google API
        # keys, Stripe live keys: fixed prefixes make them precise without context.
        "secret.token", "secret",
        "gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{60,100}|xox[abposr]-[A-Za-z0-9-]{10,100}"
        "|sk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,200}|AIza[0-9A-Za-z_-]{35}|[rs]k_live_[0-9A-Za-z]{20,99}",
        max_len=220, category="secret", left=_ALNUM + b"_-", right=_ALNUM + b"_-", strip="", score=0.95,
    ),
)

SPEC_BY_NAME = {s.name: s for s in BUILTIN_SPECS}
KINDS = tuple(dict.fromkeys(s.kind for s in BUILTIN_SPECS))


class PiiDetector:
    """All enabled PII specs compiled together: one Set pass, then per-spec finditer on what the Set saw."""

    def __init__(self, specs: Sequence[PiiSpec], rule_of: dict[str, str]) -> None:
        self.specs = tuple(specs)
        self._rule_of = rule_of  # spec kind -> rule id that configured it
        opts = re2_options()
        self._set = re2.Set.SearchSet(opts) if self.specs else None
        for spec in self.specs:
            assert self._set is not None
            self._set.Add(spec.prefilter)
        self._build_runs(opts)
        if self._set is not None:
            self._sentinel = self._set.Add(SET_SENTINEL)
            self._set.Compile()
        # Whole values, for the candidates `ends` adds: each must still be one.
        self._whole = [re2.compile(s.value, opts)._regexp.Match if s.ends else None for s in self.specs]
        self._build_glued(opts)
        self._context = [self._word_re(s.context) for s in self.specs]
        self._negative = [self._word_re(s.negative) for s in self.specs]
        self.closures = tuple(prefix_closure(f"{s.prefix}(?:{s.value}){s.suffix}{s.lookahead}") for s in self.specs)
        self._strip = [s.strip.encode() for s in self.specs]
        self._rules = [rule_of.get(s.kind, s.kind) for s in self.specs]

    def _build_runs(self, opts: re2.Options) -> None:
        """One RE2 pattern per run of consecutive specs sharing a `group` (a spec alone is a run of its own):
        `_run_of[i]` is spec i's run, `_members[r]` its specs, in the order of their capture groups."""
        self._members: list[tuple[int, ...]] = []
        self._run_of: list[int] = []
        for i, spec in enumerate(self.specs):
            prev = self._members[-1] if self._members else ()
            if spec.group and prev and self.specs[prev[0]].group == spec.group:
                assert self.specs[prev[0]].left == spec.left, f"{spec.name}: a group shares its left boundary"
                assert not (spec.rescan or spec.overlap_after), f"{spec.name}: `_run_group` searches on its own way"
                self._members[-1] = (*prev, i)
            else:
                self._members.append((i,))
            self._run_of.append(len(self._members) - 1)
        self._run_match = []
        for members in self._members:
            if len(members) == 1:
                pattern = self.specs[members[0]].pattern
            else:
                first = self.specs[members[0]]
                alts = "|".join(f"{s.prefix}({s.value}){s.suffix}" for s in (self.specs[i] for i in members))
                if first.left:
                    cls = "".join(f"\\x{{{b:02x}}}" for b in sorted(set(first.left)))
                    pattern = f"(?:^|[^{cls}])(?:{alts})"
                else:
                    pattern = f"(?:{alts})"
            self._run_match.append(re2.compile(pattern, opts)._regexp.Match)

    def _build_glued(self, opts: re2.Options) -> None:
        """The values alone, anchored where a found value ends (`_glued`): one Set answers which specs can
        start there, then only those are matched. Specs without a left boundary are never blocked by one."""
        # The characters before a value that reject it (its left boundary, or a letter or digit when the
        # value must not sit inside a token).
        self._blocking = [s.left + (_ALNUM if s.not_in_token else b"") for s in self.specs]
        self._glued_specs = [i for i, s in enumerate(self.specs) if self._blocking[i]]
        self._glued_left = bytes(set().union(*(self._blocking[i] for i in self._glued_specs)))
        self._glued_set = re2.Set.MatchSet(opts) if self._glued_specs else None
        self._anchored: list[Any] = [None] * len(self.specs)
        first: set[str] = set()
        wide: set[bytes] = set()
        for i in self._glued_specs:
            spec = self.specs[i]
            assert self._glued_set is not None
            value = f"{spec.prefix}(?:{spec.value}){spec.suffix}"
            self._glued_set.Add(value)
            self._anchored[i] = re2.compile(f"{spec.prefix}({spec.value}){spec.suffix}", opts)._regexp.Match
            # The first bytes of its values: most values are followed by punctuation, a space or CJK text,
            # which starts none, and then no Set is asked.
            starts = re2.compile(f"(?:{prefix_closure(value) or value})", opts)
            first.update(c for c in map(chr, range(128)) if starts.fullmatch(c))
            wide.update(c.encode() for c in value if not c.isascii() and starts.fullmatch(c))
        self._glued_first = "".join(sorted(first)).encode()
        self._glued_wide = frozenset(wide)  # their UTF-8 forms: "（" (3 bytes), for one
        if self._glued_set is not None:
            self._glued_set.Compile()

    @staticmethod
    def _word_re(words: tuple[str, ...]) -> re.Pattern[str] | None:
        """Latin context words need ASCII word boundaries ("order" is not in "reorder")."""
        if not words:
            return None
        alts = []
        for word in words:
            w = word.casefold()
            alt = re.escape(w)
            if w[0].isascii() and w[0].isalnum():
                # The boundary is checked after the first character, so every alternative starts with a
                # literal and `re` skips positions by their first character (1.9 -> 0.4 us per window).
                alt = f"{w[0]}(?<![a-z0-9]{w[0]}){re.escape(w[1:])}"
            if w[-1].isascii() and w[-1].isalnum():
                alt += "(?![a-z0-9])"
            alts.append(alt)
        return re.compile("|".join(alts))

    @property
    def name(self) -> str:
        return "pii"

    @property
    def max_match_len(self) -> int | None:
        """The longest value, with the text after it that decides it (`lookahead`), and its cues before and
        after (`prefix`, `suffix`) where they are bounded."""
        return max((s.max_len + sum(max_width(x) or 0 for x in (s.lookahead, s.prefix, s.suffix) if x)
                    for s in self.specs), default=0)

    def detect_views(self, views: Views) -> list[Finding]:
        if self._set is None:
            return []
        view = views.base
        data = view.data
        hits = set_hits(self._set, self._sentinel, len(self.specs), data)
        if not hits:
            return []
        return self.detect_hits(view, hits)

    def detect_hits(self, view: View, hits: Sequence[int]) -> list[Finding]:
        """Findings of the specs `hits` (indices, ascending) in the base `view`: what `detect_views` does
        after its Set pass, for a caller that ran the specs' `prefilter`s in a Set of its own."""
        data = view.data
        found: list[tuple[int, int, int, bool | None]] = []
        run_of = self._run_of
        done = -1
        for i in hits:
            r = run_of[i]
            if r == done:
                continue  # the specs of a run are consecutive, so are their hits: the run searched for them all
            done = r
            if len(self._members[r]) == 1:
                self._run(i, data, found)
            else:
                self._run_group(r, data, found)
        if not found:
            return []
        glued_left = self._glued_left
        size = len(data)
        for _, _, end, _ in found:
            if end < size and data[end - 1] in glued_left and self._glue_starts(data, end):
                self._glued(data, found)
                break
        found.sort(key=_by_start)
        if len(data) == len(view.text):  # ASCII: byte and character offsets are equal
            return [self._finding(i, view, s, s, e, verdict) for i, s, e, verdict in found]
        # Byte -> character offsets in one ascending pass over the starts, each counted from the previous one
        # (a ByteIndex conversion through the binding cost ~1.5 us more per finding).
        out = []
        b = c = 0
        for i, s, e, verdict in found:
            c += utf8_chars(data, b, s)
            b = s
            out.append(self._finding(i, view, c, s, e, verdict))
        return out

    def _run(self, i: int, data: bytes, found: list[tuple[int, int, int, bool | None]]) -> None:
        # RE2's matcher called directly in a loop (no generator, no Match objects): this runs for every
        # spec the Set reported, on most texts.
        spec = self.specs[i]
        match = self._run_match[self._run_of[i]]
        overlap_after = spec.overlap_after
        rescan = spec.rescan
        size = len(data)
        pos = 0
        while pos <= size:
            spans = match(_UNANCHORED, data, pos, size)
            s0, e0 = spans[0]
            if s0 < 0:
                return
            start, end = spans[1]
            pos = e0 if e0 > s0 else e0 + 1
            if overlap_after:
                after = data[end : end + 1]
                if after and after in overlap_after:
                    pos = start + 1  # such a spec's values start with an ASCII character: a character boundary
            if self._check(i, data, start, end, False, found):
                taken = found[-1][2]
                if taken < end:
                    # A shorter candidate was taken (a card whose optional last group ran into the next number):
                    # what follows it is searched again, or a second card right after the first went unseen.
                    pos = min(pos, taken)
            elif rescan:
                pos = start + 1  # the mobile number's first character is ASCII, "+" or a parenthesis
                if data[start] >= 0x80:
                    pos += 2  # a full-width parenthesis: three bytes

    def _run_group(self, r: int, data: bytes, found: list[tuple[int, int, int, bool | None]]) -> None:
        """`_run` for a run of several specs: each match is the spec's whose capture group took part. A value
        it rejects may overlap another spec's match (a cue after it), so the search goes on from the
        character before that value (where its left boundary is) rather than from the match's end."""
        members = self._members[r]
        match = self._run_match[r]
        groups = range(1, len(members) + 1)
        size = len(data)
        pos = 0
        while pos <= size:
            spans = match(_UNANCHORED, data, pos, size)
            s0, e0 = spans[0]
            if s0 < 0:
                return
            k = next(g for g in groups if spans[g][0] >= 0)
            start, end = spans[k]
            if self._check(members[k - 1], data, start, end, False, found):
                pos = e0 if e0 > s0 else e0 + 1
                continue
            back = start - 1
            while back > s0 and data[back] & 0xC0 == 0x80:
                back -= 1  # to the first byte of the character before the value
            pos = back if back > s0 else (e0 if e0 > s0 else e0 + 1)

    def _check(self, i: int, data: bytes, start: int, end: int, glued: bool,
               found: list[tuple[int, int, int, bool | None]]) -> bool:
        """Append spec `i`'s value at data[start:end] to `found` if it passes its checks, or the first of the
        spec's other candidates there that does (`ends`); `glued`: it starts where a found value ends."""
        spec = self.specs[i]
        max_len = spec.max_len
        if end - start > max_len and (end - start > max_len * 4 or len(data[start:end].decode("utf-8")) > max_len):
            return False
        validator = spec.validator
        whole = self._whole[i]
        for e in (end,) if spec.ends is None else spec.ends(data, start, end):
            if e != end and (e <= start or whole is None or whole(_ANCHOR_BOTH, data, start, e)[0][0] < 0):
                continue
            if self._bounded(spec, data, start, e, glued):
                verdict = None if validator is None else validator(
                    data[start:e].translate(None, self._strip[i]).decode("utf-8")
                )
                if verdict is not False:
                    found.append((i, start, e, verdict))
                    return True
        return False

    def _glued(self, data: bytes, found: list[tuple[int, int, int, bool | None]]) -> None:
        """Values that start where a found one ends, blocked by their left boundary in the pattern: judged as
        if the text started there (the module docstring says why); what they find is judged again."""
        glued_set = self._glued_set
        if glued_set is None:
            return
        size = len(data)
        glued_left = self._glued_left
        seen: set[int] = set()
        have = {(i, start) for i, start, _, _ in found}
        todo = [end for _, _, end, _ in found]
        view = memoryview(data)
        while todo:
            pos = todo.pop()
            if pos >= size or pos in seen or data[pos - 1] not in glued_left or not self._glue_starts(data, pos):
                continue
            seen.add(pos)
            for k in glued_set._set.Match(view[pos:]) or ():
                i = self._glued_specs[k]
                if data[pos - 1] not in self._blocking[i] or (i, pos) in have:
                    continue  # not blocked: the main pass judged it
                s0, e0 = self._anchored[i](_ANCHOR_START, data, pos, size)[1]
                if s0 == pos and self._check(i, data, s0, e0, True, found):
                    have.add((i, pos))
                    todo.append(found[-1][2])

    def _glue_starts(self, data: bytes, pos: int) -> bool:
        """Whether a value a found one may block can start at data[pos] (a character boundary)."""
        if data[pos] < 0x80:
            return data[pos] in self._glued_first
        return data[pos : pos + 3] in self._glued_wide or data[pos : pos + 4] in self._glued_wide

    @staticmethod
    def _bounded(spec: PiiSpec, data: bytes, start: int, end: int, glued: bool = False) -> bool:
        """The right-hand boundary, checked without consuming it (the left one is in the pattern); `glued`:
        the character before the value ends another one, so the value is no part of a longer token."""
        after = data[end : end + 1]
        if after and after[0] in spec.right:
            return False
        if spec.no_dot_digit and after == b"." and data[end + 1 : end + 2].isdigit():
            return False
        return not (spec.not_in_token and not glued and start > 0 and after and data[start - 1] in _ALNUM
                    and after[0] in _ALNUM)

    def _finding(self, i: int, view: View, start: int, bstart: int, bend: int, verdict: bool | None) -> Finding:
        """The finding of spec `i` at data[bstart:bend], which starts at character `start` of the view."""
        spec = self.specs[i]
        value = view.data[bstart:bend]
        end = start + (bend - bstart if value.isascii() else utf8_chars(value, 0, len(value)))
        score = spec.score
        if spec.score_fn is not None:
            score = spec.score_fn(view.text[start:end])
        ctx = self._context[i]
        neg = self._negative[i]
        if ctx is not None or neg is not None:
            before = view.text[max(0, start - CONTEXT_WINDOW) : start].casefold()
            if ctx is not None and ctx.search(before):
                score = round(min(1.0, score + 0.3), 3) if verdict is None else 1.0
            elif neg is not None and neg.search(before, max(0, len(before) - NEGATIVE_WINDOW)):
                # A passed checksum outweighs a nearby "order number": lowered, still reported.
                score = round(max(0.0, score - (0.3 if verdict else 0.5)), 3)
        rstart, rend = view.raw_span(start, end) if view.maps else (start, end)
        return new_finding(spec.kind, spec.category, rstart, rend, self._rules[i], score, verdict)
