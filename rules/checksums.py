"""Tri-state validators for PII values: True = the check defined by the standard passed, False = it failed
(the candidate is dropped), None = no check exists for this form. Pure functions over the matched value with
separators already removed by the caller where the docstring says so.
"""

from __future__ import annotations

from operator import mul

# GB/T 2260 province-level codes (first two digits of a resident ID's region code), incl. 71 Taiwan,
# 81 Hong Kong, 82 Macau, 83 Taiwan residents' IDs (2018 residence permits), 91 for the "foreign" permanent
# residence card prefix.
CN_PROVINCES = frozenset(
    {
        "11", "12", "13", "14", "15", "21", "22", "23", "31", "32", "33", "34", "35", "36", "37",
        "41", "42", "43", "44", "45", "46", "50", "51", "52", "53", "54", "61", "62", "63", "64", "65",
        "71", "81", "82", "83", "91",
    }
)  # fmt: skip

# ISO 7064 MOD 11-2 weights 2^(17-i) mod 11 for the 17 leading digits (GB 11643-1999 section 7).
_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_ID_CHECK = "10X98765432"

FULLWIDTH_COLON = "\uff1a"  # U+FF1A, which normalization keeps (rules.normalize.KEEP)

# GB 32100-2015: 31-character code set (no I, O, S, V, Z) and weights 3^i mod 31.
USCC_CHARS = "0123456789ABCDEFGHJKLMNPQRTUWXY"
_USCC_WEIGHTS = (1, 3, 9, 27, 19, 26, 16, 17, 20, 29, 25, 13, 8, 24, 10, 30, 28)
# Character values as byte translations, so the weighted sums run over bytes in C (a per-character Python
# step made the USCC check ~8 us per candidate, and 18-digit ID and card numbers are candidates too).
_USCC_BYTES = USCC_CHARS.encode()
_USCC_VALUE = bytes.maketrans(_USCC_BYTES, bytes(range(len(USCC_CHARS))))
_BASE36 = bytes.maketrans(b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ", bytes(range(36)))
# GB 11714-1997 organization code (USCC characters 9-17): weights of the 8 body characters.
_ORG_WEIGHTS = (3, 7, 9, 10, 5, 8, 4, 2)

# ISO 13616 IBAN lengths for the countries most seen in Chinese/English business text; others: 15-34.
IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AT": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "CH": 21, "CY": 28, "CZ": 24,
    "DE": 22, "DK": 18, "EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IS": 26, "IT": 27, "KW": 30, "KZ": 20, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
    "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PK": 24, "PL": 28, "PT": 25, "QA": 29, "RO": 24, "SA": 24,
    "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26, "UA": 29,
}  # fmt: skip


_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ID_WEIGHT_SUM_48 = 48 * sum(_ID_WEIGHTS)


def _valid_date(year: int, month: int, day: int) -> bool:
    """Gregorian calendar date (integer arithmetic: constructing datetime.date and catching its error
    cost more than the rest of the ID check)."""
    if not 1 <= month <= 12 or day < 1:
        return False
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        return day <= 29
    return day <= _DAYS[month]


def cn_resident_id(value: str) -> bool | None:
    """GB 11643-1999 citizen identity number: 18 characters with an ISO 7064 MOD 11-2 check character, a real
    birth date (YYYYMMDD, 1900 on) and a known province prefix; or the legacy 15-digit form (GB 11643-1989:
    region, YYMMDD in the 1900s, sequence; no check digit, so only date and region are checked)."""
    v = value.upper()
    if v[:2] not in CN_PROVINCES:
        return False
    if len(v) == 18:
        head = v[:17].encode("utf-8", "surrogatepass")
        if not head.isdigit():  # bytes.isdigit: ASCII digits only
            return False
        year = int(v[6:10])
        if year < 1900 or not _valid_date(year, int(v[10:12]), int(v[12:14])):
            return False
        total = sum(map(mul, head, _ID_WEIGHTS)) - _ID_WEIGHT_SUM_48  # ASCII codes, minus '0's
        return _ID_CHECK[total % 11] == v[17]
    if len(v) == 15 and v.isdigit():
        return _valid_date(1900 + int(v[6:8]), int(v[8:10]), int(v[10:12]))
    return False


# Luhn: a doubled digit d contributes 2d, minus 9 above 9; as the ASCII digit of that contribution.
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")


def luhn(digits: str) -> bool:
    """ISO/IEC 7812-1 Annex B (Luhn mod 10) over a string of ASCII digits (anything else fails). The sums run
    over bytes in C (a per-digit Python step cost ~1.9 us per card number, this ~0.5 us)."""
    b = digits.encode()
    if not b.isdigit():
        return False
    return (sum(b[-1::-2]) + sum(b[-2::-2].translate(_DOUBLED)) - 48 * len(b)) % 10 == 0


def card_network(digits: str) -> str | None:
    """ISO/IEC 7812 issuer identification ranges of the card networks we detect, with their lengths."""
    n = len(digits)
    if n < 15 or n > 19 or not digits.isascii() or not digits[:6].isdigit():
        return None  # no network issues numbers of other lengths
    six = int(digits[:6])  # one conversion; the shorter prefixes are its leading digits
    two, four = six // 10_000, six // 100
    if two in (34, 37):
        return "amex" if n == 15 else None
    if n < 16:
        return None
    if two // 10 == 4:
        return "visa"
    if 51 <= two <= 55 or 2221 <= four <= 2720:
        return "mastercard" if n == 16 else None
    if 3528 <= four <= 3589:
        return "jcb"
    if four == 6011 or 644 <= six // 1000 <= 649 or two == 65 or 622126 <= six <= 622925:
        return "discover"
    if two == 62:
        return "unionpay"
    return None


def bank_card(digits: str) -> bool | None:
    """Payment card number: a known ISO/IEC 7812 IIN range with a valid length, and the Luhn check."""
    return card_network(digits) is not None and luhn(digits)


def org_code(value: str) -> bool | None:
    """GB 11714-1997 organization code: 8 body characters (digits, letters as 10-35) and a check character
    11 - sum(c_i * w_i) mod 11, written X for 10 and 0 for 11."""
    body = value[:8].upper().encode("utf-8", "surrogatepass")
    if len(value) != 9 or not body.isalnum():  # bytes.isalnum: ASCII letters and digits only
        return False
    total = sum(map(mul, body.translate(_BASE36), _ORG_WEIGHTS))
    r = 11 - total % 11
    return value[8] == ("X" if r == 10 else "0" if r == 11 else str(r))


def cn_uscc(value: str) -> bool | None:
    """GB 32100-2015 unified social credit code: 18 characters from the 31-character set, check character
    = (31 - sum(c_i * 3^i mod 31) mod 31) mod 31; characters 9-17 are a GB 11714 organization code and
    carry its check too (two independent checks: a random 18-digit number passes both 1 time in ~340)."""
    v = value.upper()
    b = v.encode("utf-8", "surrogatepass")
    if len(b) != 18 or b.translate(None, _USCC_BYTES) or not b[2:8].isdigit():
        return False  # a character outside the code set is left after deleting the set's characters
    total = sum(map(mul, b.translate(_USCC_VALUE), _USCC_WEIGHTS))  # zip-like: stops at the 17 weights
    return USCC_CHARS[(31 - total % 31) % 31] == v[17] and org_code(v[8:17]) is True


def ipv4(value: str) -> bool | None:
    """RFC 791 dotted quad: four decimal octets, each <= 255, no leading zeros (which some parsers read as
    octal)."""
    parts = value.split(".")
    if len(parts) != 4:
        return False
    return all(p.isdigit() and int(p) <= 255 and (p == "0" or not p.startswith("0")) for p in parts)


_HEX = frozenset("0123456789abcdefABCDEF")


def _hex_groups(part: str, *, v4_tail: bool = True) -> int | None:
    """Number of 16-bit groups in a colon-separated run, or None if malformed (an IPv4 tail counts 2)."""
    if part == "":
        return 0
    groups = part.split(":")
    count = 0
    for k, g in enumerate(groups):
        if v4_tail and k == len(groups) - 1 and "." in g:
            if ipv4(g) is not True:
                return None
            count += 2
        elif 1 <= len(g) <= 4 and _HEX.issuperset(g):
            count += 1
        else:
            return None
    return count


def ipv6(value: str) -> bool | None:
    """RFC 4291 section 2.2 text forms: eight groups of 1-4 hex digits, or fewer with one `::`, optionally
    ending in an IPv4 dotted quad (counting two groups). The unspecified address `::` alone is no finding.
    Full-width colons count as colons (rules.pii matches them: normalization keeps that punctuation).
    (Hand-written: Python's ipaddress took ~15 us per candidate.)"""
    if FULLWIDTH_COLON in value:
        value = value.replace(FULLWIDTH_COLON, ":")
    if value.count(":") < 2 or value.strip(":") == "":
        return False
    head, sep, tail = value.partition("::")
    if sep:
        if "::" in tail:
            return False
        a, b = _hex_groups(head, v4_tail=False), _hex_groups(tail)
        return a is not None and b is not None and a + b <= 7
    n = _hex_groups(value)
    return n == 8


def us_ssn(digits: str) -> bool | None:
    """US Social Security number (SSA numbering since 2011 randomization): area not 000, 666 or 900-999,
    group not 00, serial not 0000."""
    if len(digits) != 9 or not digits.isdigit():
        return False
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def iban(value: str) -> bool | None:
    """ISO 13616 IBAN: country length table, then ISO 7064 MOD 97-10 over the rearranged number == 1."""
    v = value.upper()
    expected = IBAN_LENGTHS.get(v[:2])
    if (expected is not None and len(v) != expected) or not 15 <= len(v) <= 34 or not v.isalnum():
        return False
    if not v.isascii():
        return False
    return int((v[4:] + v[:4]).translate(_IBAN_DIGITS)) % 97 == 1


# ISO 13616 letters as numbers: A = 10 ... Z = 35 (digits stay).
_IBAN_DIGITS = str.maketrans({chr(65 + i): str(10 + i) for i in range(26)})


def cn_license_plate(value: str) -> bool | None:
    """GA 36-2018 motor vehicle plate: province + issuing-office letter + serial; a 5-character serial
    carries at most two letters (the standard's limit), a new-energy serial (6 characters) starts or ends
    with D/F. No check character exists beyond that shape, so passing shapes return None."""
    serial = "".join(c for c in value[2:] if c.isalnum() and c.isascii())
    letters = sum(c.isalpha() for c in serial)
    if len(serial) == 5:
        return None if letters <= 2 else False
    if len(serial) == 6:
        return None if serial[0] in "DF" or serial[-1] in "DF" else False
    return None


def passport_number(value: str) -> bool | None:
    """A passport number after its label (ICAO Doc 9303 leaves the document number's form to each state: up to 9
    characters, capitals and digits): False for fewer than two digits (a word in capitals, "PENDING", or
    an abbreviation), else None, as no check digit is written with the number itself."""
    return None if sum(c.isdigit() for c in value) >= 2 else False
