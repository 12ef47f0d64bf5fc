"""Valid and invalid sample values for the detector tests, built here independently of rules/checksums.py
(so a shared mistake in a checksum cannot make both sides agree)."""

from __future__ import annotations

ID_WEIGHTS = [2 ** (17 - i) % 11 for i in range(17)]  # ISO 7064 MOD 11-2, derived rather than copied
USCC_ALPHABET = "0123456789ABCDEFGHJKLMNPQRTUWXY"


def resident_id(body17: str) -> str:
    total = sum(int(c) * w for c, w in zip(body17, ID_WEIGHTS, strict=True))
    return body17 + "10X98765432"[total % 11]


def bad_check(value: str) -> str:
    """The value with its last character changed to another digit: the check no longer holds."""
    last = value[-1]
    return value[:-1] + ("1" if last not in "1" else "2")


def luhn_complete(body: str) -> str:
    digits = [int(c) for c in body]
    total = 0
    for i, d in enumerate(reversed(digits)):
        doubled = d * 2 if i % 2 == 0 else d
        total += doubled - 9 if doubled > 9 else doubled
    return body + str((10 - total % 10) % 10)


def uscc(body8: str, org8: str) -> str:
    """An 18-character USCC: 2 + 6 characters, an 8-character org code body + its GB 11714 check, then the
    GB 32100 check."""
    org_total = sum(int(c, 36) * w for c, w in zip(org8, (3, 7, 9, 10, 5, 8, 4, 2), strict=True))
    r = 11 - org_total % 11
    org = org8 + ("X" if r == 10 else "0" if r == 11 else str(r))
    first17 = body8 + org
    weights = [pow(3, i, 31) for i in range(17)]
    total = sum(USCC_ALPHABET.index(c) * w for c, w in zip(first17, weights, strict=True))
    return first17 + USCC_ALPHABET[(31 - total % 31) % 31]


def iban(country: str, bban: str) -> str:
    rearranged = bban + country + "00"
    check = 98 - int("".join(str(int(c, 36)) for c in rearranged)) % 97
    return f"{country}{check:02d}{bban}"


def fullwidth(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def spaced(s: str, groups: tuple[int, ...], sep: str = " ") -> str:
    out, pos = [], 0
    for g in groups:
        out.append(s[pos : pos + g])
        pos += g
    if pos < len(s):
        out.append(s[pos:])
    return sep.join(out)


ID_18 = resident_id("11010519491231002")  # 11010519491231002X
ID_18B = resident_id("44030419900307123")
ID_15 = "110105491231002"
VISA = luhn_complete("424242424242424")
UNIONPAY_19 = luhn_complete("622202123456789012")
MASTERCARD_2 = luhn_complete("222100000000000")
AMEX = luhn_complete("37828224631000")
JCB = luhn_complete("353011133330000")
DISCOVER = luhn_complete("601111111111111")
USCC = uscc("91350100", "M0001000")
IBAN_DE = iban("DE", "370400440532013000")
IBAN_GB = iban("GB", "WEST12345698765432")
