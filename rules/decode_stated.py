"""Ciphers read with what the text states, for rules/decode.py: the Hill cipher with its 2x2 key matrix, the straddling
checkerboard with its top row, and the spiral route transposition with its grid. Each is a puzzle-book classic a
model undoes when told the key, and each is read only with the key the text states (the package never guesses one).

Hill (2x2, A=0, mod 26): the key as a matrix ("[[3, 3], [2, 5]]", "[[3 3] [2 5]]", "(3 3; 2 5)": `hill_key`) or as a
four-letter word row by row ("key HILL" is [[7, 8], [11, 11]]), its determinant prime to 26. In a text that names
the cipher (`HILL_HINT`), the longest run of letters in groups (`HILL_RUN`) in the key's window is multiplied pair by
pair by the inverse, as column vectors (K p) and as row vectors (p K), both read; the X padding at the end is dropped
and the words are found again, as Playfair's are.

Straddling checkerboard: a top row of eight letters and two blanks on the digits 0-9; the blanks' digits lead the two
rows below, which hold the rest of the alphabet in order and then `.` and `/` (the common form: top row
"ET AON RIS", blanks at 2 and 6, rows BCDFGHJKLM and PQUVWXYZ./; `/` is a space). In a text that names the
checkerboard (`CHECKER_HINT`), digit runs (`DIGIT_RUN`, groups of five as written) are read with the top row stated
("E T _ A O N _ R I S", "ET_AON_RIS": `checker_row`) or the common one, kept when the letters read as English.

Spiral route: the letters written row by row into a grid and read clockwise inward from the top-left corner. In a
text that names a spiral (`SPIRAL_HINT`), the grid's stated sides ("8 columns", "5 rows", "5x8", "宽8") that divide a
run's length give its shape (the other side is the length over it), and the run is written back into the grid along
the spiral and read row by row; the X padding is dropped and the words found again. Without a stated side nothing is
tried.
"""

from __future__ import annotations

import math
import re

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Letters in groups, capitals or small letters (a ciphertext's usual five, the last shorter), or one unbroken run.
GROUPED_RUN = re.compile(r"(?<![A-Za-z])(?:[A-Z]{5}(?: [A-Z]{1,5}){2,}|[a-z]{5}(?: [a-z]{1,5}){2,}|[A-Z]{12,})"
                         r"(?![A-Za-z])")

# Hill
HILL_HINT = r"(?i:\bhill ?cipher)|希尔密码|希尔加密|希爾密碼"
HILL_MENTION = re.compile(HILL_HINT)
_N = r"\s*(-?[0-9]{1,2})\s*"
HILL_MATRIX = re.compile(rf"\[\s*\[{_N},?{_N}\]\s*,?\s*\[{_N},?{_N}\]\s*\]|\({_N},?{_N};{_N},?{_N}\)")
HILL_WORD = re.compile(r"(?:\bkey(?:word)?|密钥)\s*(?:[:=：]|is|是|为)?\s*[\"'“(]?([A-Z]{4}|[a-z]{4})\b")


def hill_key(text: str) -> tuple[int, int, int, int] | None:
    """The first key matrix stated in `text` (or a four-letter key word) whose determinant is prime to 26."""
    found = [tuple(int(g) % 26 for g in m.groups() if g is not None) for m in HILL_MATRIX.finditer(text)]
    found += [tuple(_ALPHABET.index(c) for c in m.group(1).upper()) for m in HILL_WORD.finditer(text)]
    for key in found:
        a, b, c, d = key
        if math.gcd((a * d - b * c) % 26, 26) == 1 and (a, b, c, d) != (1, 0, 0, 1):
            return a, b, c, d
    return None


def hill(run: str, key: tuple[int, int, int, int]) -> list[str]:
    """A run's letters decrypted with `key`'s inverse as column vectors and as row vectors, lower case; none when the
    letters are an odd count."""
    letters = [_ALPHABET.index(c) for c in run.upper() if c in _ALPHABET]
    if len(letters) % 2:
        return []
    a, b, c, d = key
    r = pow((a * d - b * c) % 26, -1, 26)
    ia, ib, ic, id_ = d * r % 26, -b * r % 26, -c * r % 26, a * r % 26
    out = []
    for m in ((ia, ib, ic, id_), (ia, ic, ib, id_)):  # K^-1 c, and c K^-1 (the transpose)
        plain: list[str] = []
        for i in range(0, len(letters), 2):
            x, y = letters[i], letters[i + 1]
            plain += _ALPHABET[(m[0] * x + m[1] * y) % 26], _ALPHABET[(m[2] * x + m[3] * y) % 26]
        out.append("".join(plain).lower())
    return out


# Straddling checkerboard
CHECKER_HINT = r"(?i:straddling|checker ?board|跨步棋盘|跨越棋盘|跨棋盘)"
COMMON_ROW = "ET AON RIS"
_ROW = re.compile(r"(?<![A-Za-z_])([A-Z_](?:[ ,]?[A-Z_]){9})(?![A-Za-z_])")
DIGIT_RUN = re.compile(r"(?<![0-9])[0-9]{2,}(?: [0-9]{1,})+(?![0-9])|(?<![0-9])[0-9]{12,}(?![0-9])")


def checker_row(text: str) -> str | None:
    """A top row stated in `text`: ten cells, eight distinct letters and two blanks (`_`), as "ET AON RIS"'s form."""
    for m in _ROW.finditer(text):
        cells = m.group(1).replace(" ", "").replace(",", "")
        letters = cells.replace("_", "")
        if len(cells) == 10 and cells.count("_") == 2 and len(set(letters)) == 8:
            return cells.replace("_", " ")
    return None


def checkerboard(digits: str, top: str = COMMON_ROW) -> str:
    """Digits read with the board of top row `top` (ten cells, two of them blank): letters, `/` as a space, `.`."""
    blanks = [i for i, c in enumerate(top) if c == " "]
    rest = [c for c in _ALPHABET if c not in top] + [".", "/"]
    rows = {blanks[0]: rest[:10], blanks[1]: rest[10:20]}
    out: list[str] = []
    i = 0
    while i < len(digits):
        d = int(digits[i])
        if d in rows:
            if i + 1 >= len(digits):
                break
            out.append(rows[d][int(digits[i + 1])])
            i += 2
        else:
            out.append(top[d])
            i += 1
    return "".join(out).replace("/", " ").lower()


# Spiral route
SPIRAL_HINT = r"(?i:\bspiral\b|螺旋)"
_SIDES = re.compile(r"(?i)\b([0-9]{1,2})\s*(?:columns|cols|rows|wide|high|across|down|列|行)|"
                    r"(?:width|height|columns|rows|宽|高|列数|行数)\s*(?:[:=：]|of|is|为)?\s*([0-9]{1,2})\b|"
                    r"\b([0-9]{1,2})\s*(?:[x×*]|by)\s*([0-9]{1,2})\b")


def stated_sides(text: str) -> list[int]:
    """The grid sides stated in `text` (2-40), in order, each once."""
    sides = [int(g) for m in _SIDES.finditer(text) for g in m.groups() if g is not None]
    return list(dict.fromkeys(s for s in sides if 2 <= s <= 40))


def spiral_order(rows: int, cols: int) -> list[int]:
    """The cells of a rows x cols grid (row by row indices) clockwise inward from the top-left corner."""
    order: list[int] = []
    top, bottom, left, right = 0, rows - 1, 0, cols - 1
    while top <= bottom and left <= right:
        order += [top * cols + c for c in range(left, right + 1)]
        order += [r * cols + right for r in range(top + 1, bottom + 1)]
        if top < bottom:
            order += [bottom * cols + c for c in range(right - 1, left - 1, -1)]
        if left < right:
            order += [r * cols + left for r in range(bottom - 1, top, -1)]
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return order


def spiral(run: str, sides: list[int]) -> list[str]:
    """A run's letters written back along the spiral of each grid the stated sides give, read row by row (lower
    case, the X padding at the end dropped)."""
    letters = [c for c in run.upper() if c in _ALPHABET]
    n = len(letters)
    out = []
    for side in sides:
        if n % side:
            continue
        for rows, cols in ((side, n // side), (n // side, side)):
            grid = [""] * n
            for letter, cell in zip(letters, spiral_order(rows, cols), strict=True):
                grid[cell] = letter
            plain = "".join(grid).rstrip("X").lower()
            if plain not in out:
                out.append(plain)
    return out
