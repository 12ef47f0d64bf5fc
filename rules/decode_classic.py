"""Classical ciphers with a stated key for rules/decode.py: Playfair, Trifid and the affine cipher. Each is a
puzzle-book classic a model decrypts when given the key, and each is read only with the key the text states, as
Vigenère is (rules/decode_ciphers.py): a search over keys reads English into any text of letters.

Playfair: a 5x5 square of the key's letters (J as I), each once, then the rest of the alphabet without J; the
plain text's letters in pairs, X between a pair's doubled letters and at the end of an odd count; a pair in one row
shifts right, in one column down, else each letter takes the other's column. A run is pairs of capitals (or of small
letters) apart by spaces (`PLAYFAIR_RUN`); Playfair never writes a pair of one letter twice, nor a J, so a run that
has one is none. Decrypted (`playfair`), the padding X between doubled letters and at the end is dropped
(`playfair_plain`) and the words are found again as columnar transposition's are.

Trifid (Delastelle): 27 symbols (the key's letters, each once, the rest of the alphabet, then `+`) in a 3x3x3 cube,
layers of nine, rows of three (`trifid_cube`); in each group of `period` letters the layer, row and column digits of
the letters are written as three lines and read back in threes. A run is groups of five of capitals and `+`
(`TRIFID_RUN`); the period is the one stated near the key ("period 5": `PERIOD_STATED`), else 5, and the other
common ones (TRIFID_PERIODS) after it. `+` is the plain text's space.

Affine (E(x) = a*x + b mod 26, case kept, other characters as they are): the key is a pair stated with it ("a=5,
b=8", "5x + 8", "(5, 8)": `AFFINE_KEY`) in a text that names the cipher or writes its formula mod 26
(`AFFINE_HINT`, an alternative of the decoder's cold RE2 pass); `a` must be prime to 26. Without a stated key nothing
is tried: the package never guesses a key (ROT13, ROT47 and Atbash are single fixed tables), and 311 keys would
read English into short texts of letters.
"""

from __future__ import annotations

import math
import re

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Playfair
PLAYFAIR_PAIRS = 6  # pairs in a run
PLAYFAIR_RUN = re.compile(rf"\b(?:[A-Z]{{2}}(?: [A-Z]{{2}}){{{PLAYFAIR_PAIRS - 1},}}"
                          rf"|[a-z]{{2}}(?: [a-z]{{2}}){{{PLAYFAIR_PAIRS - 1},}})\b")


def playfair_square(key: str) -> str:
    """The 25 letters of `key`'s square, row by row."""
    head = "".join(dict.fromkeys(c for c in key.upper().replace("J", "I") if c in _ALPHABET))
    return head + "".join(c for c in _ALPHABET if c != "J" and c not in head)


def playfair(run: str, key: str) -> str | None:
    """A Playfair run's letters decrypted with `key`, upper case; None when it cannot be Playfair (a doubled pair, a
    J, an odd count)."""
    letters = run.replace(" ", "").upper()
    if len(letters) % 2 or "J" in letters:
        return None
    square = playfair_square(key)
    where = {c: divmod(i, 5) for i, c in enumerate(square)}
    out: list[str] = []
    for i in range(0, len(letters), 2):
        a, b = letters[i], letters[i + 1]
        if a == b:
            return None
        (ra, ca), (rb, cb) = where[a], where[b]
        if ra == rb:
            out += square[ra * 5 + (ca - 1) % 5], square[rb * 5 + (cb - 1) % 5]
        elif ca == cb:
            out += square[(ra - 1) % 5 * 5 + ca], square[(rb - 1) % 5 * 5 + cb]
        else:
            out += square[ra * 5 + cb], square[rb * 5 + ca]
    return "".join(out)


def playfair_plain(letters: str) -> str:
    """Decrypted Playfair letters without their padding: an X that ends a pair whose next pair starts with the
    letter before it ("LX LO" is "LLO"), and a last X."""
    out: list[str] = []
    for i in range(0, len(letters) - 1, 2):
        a, b = letters[i], letters[i + 1]
        out.append(a)
        if not (b == "X" and (letters[i + 2:i + 3] == a or i + 2 == len(letters))):
            out.append(b)
    return "".join(out)


# Trifid
TRIFID_RUN = re.compile(r"(?<![A-Z+])[A-Z+]{5}(?: [A-Z+]{5})+(?: [A-Z+]{1,4})?(?![A-Z+])")
TRIFID_PERIODS = (5, 4, 6, 7, 3, 8, 9, 10)  # tried in this order when no period is stated
PERIOD_STATED = re.compile(r"(?i)\b(?:period|group(?: size)?)\s*(?:=|:|of|is)?\s*([0-9]{1,2})\b"
                           r"|周期\s*[:：为是]?\s*([0-9]{1,2})")


def trifid_cube(key: str) -> str:
    """The 27 symbols of `key`'s cube, layer by layer, row by row."""
    return "".join(dict.fromkeys([c for c in key.upper() if c in _ALPHABET] + list(_ALPHABET) + ["+"]))


def trifid(run: str, key: str, period: int) -> str:
    """A Trifid run decrypted with `key` and `period`, `+` as a space, lower case."""
    symbols = run.replace(" ", "")
    cube = trifid_cube(key)
    where = {c: (i // 9, i // 3 % 3, i % 3) for i, c in enumerate(cube)}
    out: list[str] = []
    for at in range(0, len(symbols), period):
        group = symbols[at:at + period]
        n = len(group)
        digits = [d for c in group for d in where[c]]
        out += (cube[9 * digits[j] + 3 * digits[n + j] + digits[2 * n + j]] for j in range(n))
    return "".join(out).replace("+", " ").lower()


def stated_period(text: str) -> int | None:
    m = PERIOD_STATED.search(text)
    period = int(next(g for g in m.groups() if g)) if m else 0
    return period if 2 <= period <= 30 else None


# Affine
AFFINE_HINT = r"(?i:\baffine\b|仿射|[0-9] ?\*? ?x ?\+ ?[0-9]{1,2}\)? ?\(?mod(?:ulo)? ?26)"
AFFINE_KEY = re.compile(
    r"(?i)\ba\s*=\s*([0-9]{1,2})\s*[,;，]?\s*(?:and\s+|和|,\s*)?b\s*=\s*([0-9]{1,2})\b"
    r"|\b([0-9]{1,2})\s*\*?\s*x\s*\+\s*([0-9]{1,2})\b"
    r"|(?:key|密钥)\s*[:=：]?\s*\(\s*([0-9]{1,2})\s*,\s*([0-9]{1,2})\s*\)"
)


def affine_key(text: str) -> tuple[int, int] | None:
    """The first (a, b) stated in `text` whose `a` is prime to 26 (and which is not the identity)."""
    for m in AFFINE_KEY.finditer(text):
        a, b = (int(g) for g in m.groups() if g is not None)
        if math.gcd(a, 26) == 1 and (a % 26, b % 26) != (1, 0):
            return a % 26, b % 26
    return None


def affine(run: str, a: int, b: int) -> str:
    """`run` decrypted with the affine key (a, b): x = a^-1 (y - b) mod 26, case kept."""
    inverse = pow(a, -1, 26)
    plain = "".join(_ALPHABET[inverse * (i - b) % 26] for i in range(26))
    return run.translate(str.maketrans(_ALPHABET + _ALPHABET.lower(), plain + plain.lower()))
