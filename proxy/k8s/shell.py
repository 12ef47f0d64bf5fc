"""The words of a shell script that is one simple command, with where each word sits in the script.

`words(script)` reads a `sh -c` script the way POSIX sh would (XCU 2.2 quoting, 2.3 token recognition) but only
as far as a single simple command needs: blanks separate words; backslash-newline joins lines; single quotes,
double quotes and backslashes quote. Anything that would make the script more than one plain invocation, or make
a word's value unknown before the script runs, is a `ShellError` naming the character and where it is:
operators (`| & ; < > ( )`), a newline between words (a second command), expansions (`$`, backquotes: the
value is known only at run time), globbing and brace characters, `#` starting a comment. The caller then knows
every word's exact value and its span, so a rewrite can replace one word's characters and keep every other
character of the script as it was.

`shlex.split` (POSIX mode) must agree with the words found, as a second reading; a disagreement is a
`ShellError` too.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from proxy.exceptions import ProxyError

# XCU 2.2: characters that must be quoted to stand for themselves. `*?[` glob, `{}` expand in bash, `~` at a
# word's start is a home directory, `!` negates a pipeline, `#` starts a comment: all refused when unquoted.
_OPERATORS = frozenset("|&;<>()")
_UNSAFE = frozenset("$`*?[]{}!#~\\\"'") | _OPERATORS
_BLANKS = frozenset(" \t")
# Characters a replacement word may hold without quoting (what a port number or an IP address is made of).
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,:=/+%@")


class ShellError(ProxyError, ValueError):
    """The script is not one simple command whose words are all known before it runs."""


@dataclass(frozen=True, slots=True)
class Word:
    value: str  # after quote removal
    start: int  # script[start:end] is the word as written, quotes included
    end: int

    def raw(self, script: str) -> str:
        return script[self.start:self.end]


def is_plain(text: str) -> bool:
    """Whether `text` can be written into a script as a word without quoting."""
    return bool(text) and all(c in _PLAIN for c in text)


def words(script: str) -> list[Word]:
    """The words of `script`, which must be one simple command line (module docstring)."""
    found: list[Word] = []
    i, n = 0, len(script)
    line_ended = False  # an unquoted newline was seen: any later word is a second command
    while i < n:
        c = script[i]
        if c in _BLANKS:
            i += 1
            continue
        if c == "\n":
            line_ended = bool(found) or line_ended
            i += 1
            continue
        if c == "\\" and script.startswith("\n", i + 1):  # line continuation between words
            i += 2
            continue
        if line_ended:
            raise ShellError(f"a newline at {_at(script, i)} starts a second command")
        word, i = _word(script, i)
        found.append(word)
    _cross_check(script, found)
    return found


def _word(script: str, i: int) -> tuple[Word, int]:
    start, n = i, len(script)
    value: list[str] = []
    while i < n:
        c = script[i]
        if c in _BLANKS or c == "\n":
            break
        if c == "'":
            close = script.find("'", i + 1)
            if close < 0:
                raise ShellError(f"the single quote at {_at(script, i)} is never closed")
            value.append(script[i + 1:close])
            i = close + 1
        elif c == '"':
            i = _double_quoted(script, i + 1, value)
        elif c == "\\":
            if i + 1 >= n:
                raise ShellError("the script ends with a backslash")
            if script[i + 1] != "\n":  # backslash-newline inside a word joins it with the next line
                value.append(script[i + 1])
            i += 2
        elif c in "$`":
            raise ShellError(f"{c!r} at {_at(script, i)} expands when the script runs: the words are not known "
                             "before it does")
        elif c in _UNSAFE:
            what = "an operator" if c in _OPERATORS else "a pattern, comment or history character"
            raise ShellError(f"{c!r} at {_at(script, i)} is {what}: the command line is not one plain invocation")
        else:
            value.append(c)
            i += 1
    return Word("".join(value), start, i), i


def _double_quoted(script: str, i: int, value: list[str]) -> int:
    """XCU 2.2.3: inside double quotes `$` and backquote still expand; backslash quotes only `$ ` " \\ newline`."""
    n = len(script)
    while i < n:
        c = script[i]
        if c == '"':
            return i + 1
        if c in "$`":
            raise ShellError(f"{c!r} at {_at(script, i)} expands at run time: the word's value is not known")
        if c == "\\" and i + 1 < n and script[i + 1] in '$`"\\\n':
            if script[i + 1] != "\n":
                value.append(script[i + 1])
            i += 2
            continue
        value.append(c)
        i += 1
    raise ShellError("a double quote is never closed")


def _cross_check(script: str, found: list[Word]) -> None:
    # shlex keeps the newline of a backslash-newline (sh drops both); with those removed the readings must agree
    try:
        expected = shlex.split(script.replace("\\\n", ""), posix=True)
    except ValueError as exc:
        raise ShellError(f"shlex cannot read the script: {exc}") from exc
    if expected != [w.value for w in found]:
        raise ShellError(f"the script reads as {expected} to shlex but {[w.value for w in found]} here")


def _at(script: str, i: int) -> str:
    return f"offset {i} ({script[max(0, i - 12):i + 12]!r})"
