"""A streamed answer checked as it arrives: cut at the first character that can no longer lead to a valid
document, and never before (issue 21, "Soundness first").

Two parts. An incremental JSON tokenizer accepting exactly what `parse_document` accepts (RFC 8259 as
Python's `json` reads it, without NaN/Infinity; JSON whitespace around the document), fed pieces split
anywhere: inside strings, escapes, numbers and literals. And a schema cursor: at each value position the
candidate schema nodes that must hold there, each guarded by the anyOf/oneOf branch it came through. A node
failing kills its branch; a group whose branches all died kills the branch it sits in; the document dies
when a node under no branch fails. Decisions rest only on facts that cannot change later:

- the kinds a node allows (`type`, `enum`, `const`) at a value's first character (a number cannot be told
  integral before it ends: `1.0` and `1e2` are integers in draft 2020-12);
- decoded string prefixes against `enum`/`const` and against the names `additionalProperties: false`
  leaves; string lengths against `maxLength` (Python str length: a `\\ud83d\\ude00` pair is one character);
- item counts against `maxItems`, items beyond `prefixItems` against `items`; distinct keys against
  `maxProperties`; a key that only a `false` schema would take;
- every finished value, checked against each of its candidate nodes with the full validator of that
  subschema (`CompiledSchema.subschema_validator`), so `required`, `minLength`, `pattern`, numbers' bounds
  and whatever else the node says are decided when the value ends.

Repeated property names: where they are allowed, Python's `json` keeps the last value, so a member's value
is not final until its object closes (a later `"a": ...` replaces it): with `unique_keys=False` the checker
does not judge member values on their own, the object is judged when it closes. With `unique_keys=True` (RFC
8259 section 4 says names SHOULD be unique; I-JSON, RFC 7493, says MUST) a repeated name is a violation, here
and in `end()`, and member values are judged as soon as they end. The default reads documents the way
`parse_document` does (REPEATED_NAMES_REFUSED): the checker must never cut what the whole-answer check takes.

Left until the value it constrains is finished (then its node's validator decides): everything a node says
that is not above (`not`, `if`, `dependentSchemas`, `contains`, `uniqueItems`, `unevaluated*`, `oneOf`'s
"exactly one", `$ref` other than a local JSON pointer, ...). Left to `end()`: the root number (it ends with
the text); subschemas reached through `$dynamicRef` (their meaning depends on the dynamic scope; with a
`$dynamicRef` anywhere only the root is checked with a validator); drafts other than 2020-12 (syntax only);
nesting deeper than MAX_TRACKED_DEPTH (syntax only below it) and deeper than Python's json goes (that depends
on the caller's stack); integers over Python's 4300 digits; strings the validator cannot read (a lone
surrogate escape).
"""

from __future__ import annotations

import bisect
import json
import re
from typing import Any, Final, cast

import jsonschema_rs

from rules.errors import RulesError
from rules.schema.compiled import CompiledSchema, Violation, describe, pointer_of
from rules.schema.document import parse_document
from rules.schema.nodes import (
    K_ARR,
    K_FALSE,
    K_NULL,
    K_NUM,
    K_OBJ,
    K_STR,
    K_TRUE,
    Node,
    plan_for,
)

MAX_CHARS = 8 * 1024 * 1024
MAX_TRACKED_DEPTH = 64  # below it only syntax is followed; the validators see the value when an ancestor ends
CHECK_BUDGET = 4  # containers re-read for their validators, in characters per character of max_chars
MAX_CANDIDATES = 256  # schema nodes at one position (recursive anyOf through $ref would be endless)

_FIRST: Final[dict[str, int]] = {"{": K_OBJ, "[": K_ARR, '"': K_STR, "t": K_TRUE, "f": K_FALSE, "n": K_NULL,
                                 "-": K_NUM, **dict.fromkeys("0123456789", K_NUM)}
_LITERALS: Final[dict[str, tuple[str, object]]] = {"t": ("rue", True), "f": ("alse", False), "n": ("ull", None)}
_ESCAPES: Final[dict[str, str]] = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                                   "t": "\t"}
_WS = re.compile(r"[ \t\n\r]*")
_STR_STOP = re.compile(r'["\\\x00-\x1f]')
_DIGITS = re.compile(r"[0-9]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")  # json.scanner's NUMBER_RE
_HEX = re.compile(r"[0-9a-fA-F]*")
_BIG = 1 << 62

# Tokenizer states.
S_VALUE, S_ARR_FIRST, S_OBJ_FIRST, S_KEY, S_COLON, S_AFTER, S_END = range(7)
S_STR, S_ESC, S_UESC, S_NUM, S_LIT = range(7, 12)
# Number states: after '-', after a leading 0, in the integer digits, after '.', in the fraction, after
# 'e', after the exponent's sign, in the exponent.
N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP = range(8)
_EXPECTED: Final[dict[int, str]] = {
    S_VALUE: "a value", S_ARR_FIRST: "a value or ']'", S_OBJ_FIRST: "a property name or '}'",
    S_KEY: "a property name", S_COLON: "':'", S_END: "nothing but whitespace after the document",
}


class _Group:
    """An anyOf/oneOf at one value position: alive while one of its branches is."""

    __slots__ = ("alive", "keyword", "owner", "pointer")

    def __init__(self, owner: _Branch | None, alive: int, keyword: str, pointer: str) -> None:
        self.owner = owner
        self.alive = alive
        self.keyword = keyword
        self.pointer = pointer


class _Branch:
    __slots__ = ("dead", "group")

    def __init__(self, group: _Group) -> None:
        self.group = group
        self.dead = False


Cand = tuple[Node, _Branch | None]


def _live(branch: _Branch | None) -> bool:
    while branch is not None:
        if branch.dead:
            return False
        branch = branch.group.owner
    return True


def _covered(prior: list[_Branch | None], branch: _Branch | None) -> bool:
    """Whether a node already holds at this position under `branch` or a branch enclosing it."""
    while True:
        if branch in prior:
            return True
        if branch is None:
            return False
        branch = branch.group.owner


class _Frame:
    """An open object or array. `cands` is empty when nothing is checked inside (syntax only)."""

    __slots__ = ("cands", "count", "is_obj", "keys", "memo", "next_cands", "start", "tok")

    def __init__(self, is_obj: bool, cands: list[Cand], start: int) -> None:
        self.is_obj = is_obj
        self.cands = cands
        self.start = start  # absolute offset of the bracket
        self.count = 0  # items so far, or distinct keys so far
        self.keys: set[str] = set()
        self.tok: str | None = None  # the current member's key (objects)
        self.next_cands: list[Cand] | None = None  # the next key's, member value's or item's candidates
        self.memo: tuple[list[Cand], list[Cand]] | None = None  # the last items' seeds and candidates


# Containers nested deeper than MAX_TRACKED_DEPTH: one shared frame each for objects and arrays, so that a
# hostile `[[[[...` costs a list slot per level, not a frame. Nothing is checked in them (`cands` stays empty).
_DEEP_OBJ = _Frame(True, [], 0)
_DEEP_ARR = _Frame(False, [], 0)


class _Dead(Exception):
    """Internal control flow: the document died at `index` of the piece being fed; never escapes feed()."""

    def __init__(self, index: int) -> None:
        self.index = index


class _Text:
    """The answer so far: small pieces grouped into blocks, so that slices and the whole stay cheap."""

    __slots__ = ("blocks", "size", "starts", "tail", "tail_start")

    def __init__(self) -> None:
        self.blocks: list[str] = []
        self.starts: list[int] = []
        self.tail: list[str] = []
        self.tail_start = 0
        self.size = 0

    def append(self, piece: str) -> None:
        self.tail.append(piece)
        self.size += len(piece)
        if len(self.tail) >= 256:
            self.blocks.append("".join(self.tail))
            self.starts.append(self.tail_start)
            self.tail = []
            self.tail_start = self.size

    def slice(self, a: int, b: int) -> str:
        if a >= self.tail_start:  # usually a value that just ended: join the last few pieces only
            tail = self.tail
            k = len(tail)
            start = self.size
            while start > a:
                k -= 1
                start -= len(tail[k])
            return "".join(tail[k:])[a - start:b - start]
        k = bisect.bisect_right(self.starts, a) - 1
        first = self.starts[k]
        parts = [b_ for b_, s in zip(self.blocks[k:], self.starts[k:], strict=True) if s < b]
        if b > self.tail_start:
            parts.extend(self.tail)
        return "".join(parts)[a - first:b - first]

    def value(self) -> str:
        return "".join((*self.blocks, *self.tail))


def _valid(node: Node, value: object) -> bool:
    """The node's validator on a finished value; a value it cannot read (a lone surrogate) waits for end()."""
    validator = node.validator
    if validator is None:
        return True
    try:
        return bool(validator.is_valid(value))
    except (ValueError, OverflowError, RecursionError):
        return True


def _common(name: str, at: int, s: str) -> int:
    """How many characters of `s` match `name` from `at` on."""
    k = 0
    for a, b in zip(name[at:at + len(s)], s, strict=False):
        if a != b:
            break
        k += 1
    return k


def _lookup(document: object, path: list[Any]) -> object:
    for token in path:
        if isinstance(document, dict) and str(token) in document:
            document = document[str(token)]
        elif isinstance(document, list) and isinstance(token, int) and 0 <= token < len(document):
            document = document[token]
        else:
            return None
    return document


def _no_constants(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _repeated_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise ValueError("repeated key")
    return found


_UNIQUE = json.JSONDecoder(object_pairs_hook=_repeated_keys, parse_constant=_no_constants)
# Whether parse_document refuses a property name repeated in one object (I-JSON) or keeps the last value
# (Python's json): the checker's default reads documents the same way.
REPEATED_NAMES_REFUSED: Final[bool] = not parse_document('{"a": 0, "a": 0}').ok


class StreamChecker:
    """One streamed answer text (a message's content, or one tool call's `arguments`) against one schema.

    `feed(text)` returns None while every character so far can still lead to a valid document, else the
    index in `text` of the first one that cannot: `violation` is then set, the caller releases `text[:index]`
    and nothing after, and every later feed returns 0. `accepted` counts the characters taken so far. `end()`
    judges the complete text with the full validator (parse_document, then CompiledSchema.violations) and
    returns the first violation or None, the early one if there was one; feeding after it is a RulesError.
    The text is kept (up to `max_chars`; beyond it is a violation) for end().

    `unique_keys=True`: a repeated property name is a violation (also in end()), and member values are judged
    as soon as they end; False: a repeated name replaces the value before it, as Python's json reads it. The
    default (None) is what parse_document does (module docstring).
    """

    def __init__(self, schema: CompiledSchema, *, max_chars: int = MAX_CHARS, unique_keys: bool | None = None
                 ) -> None:
        self.schema = schema
        self.max_chars = max_chars
        self.unique_keys = REPEATED_NAMES_REFUSED if unique_keys is None else unique_keys
        self.violation: Violation | None = None
        self.accepted = 0
        self._text = _Text()
        self._budget = CHECK_BUDGET * max_chars
        self._ended = False
        self._result: Violation | None = None
        self._state = S_VALUE
        self._stack: list[_Frame] = []
        self._cur = ""  # the piece being fed, and its absolute offset
        self._base = 0
        self._vcands: list[Cand] = []  # candidates of the scalar being read
        self._vstart = 0
        self._nsub = N_INT
        self._lit = ""
        self._scands: list[Cand] = []
        self._skey = False
        self._strack = False
        self._smax = _BIG
        self._slen = 0
        self._enums: list[tuple[list[str], Node, _Branch | None]] = []
        self._sparts: list[str] | None = None
        self._hi = ""  # a high surrogate escape waiting for its low half
        self._hex = ""
        self._groups = 0  # anyOf/oneOf groups made so far
        self._members: dict[tuple[int, str], tuple[list[Cand], list[Cand]]] = {}
        root = plan_for(schema)
        self._root_cands: list[Cand] = []
        self._stillborn: Violation | None = None
        if root is not None:
            try:
                self._root_cands = self._expand([(root, None)], 0)
            except _Dead:
                self._stillborn, self.violation = self.violation, None

    # --- the caller's side ------------------------------------------------------------------------------

    def feed(self, text: str) -> int | None:
        base = self.accepted
        if self.violation is not None or self._ended or not text or len(text) > self.max_chars - base \
                or self._stillborn is not None:
            return self._feed_rarely(text)
        self._text.append(text)
        self._cur = text
        self._base = base
        try:
            self._run(text)
        except _Dead as dead:
            self.accepted = base + dead.index
            return dead.index
        self.accepted = base + len(text)
        return None

    def _feed_rarely(self, text: str) -> int | None:
        if self.violation is not None:
            return 0
        if self._ended:
            raise RulesError("StreamChecker.feed after end()")
        if not text:
            return None
        if self._stillborn is not None:
            self.violation = self._stillborn
            return 0
        room = self.max_chars - self.accepted  # the text is longer than what is left
        cut = self.feed(text[:room]) if room else None
        if cut is not None:
            return cut
        self.violation = Violation("", "size", f"the answer is longer than {self.max_chars} characters")
        return room

    def end(self) -> Violation | None:
        if self._ended:
            return self._result
        self._ended = True
        self._result = self.violation if self.violation is not None else self._judge_whole()
        return self._result

    def _judge_whole(self) -> Violation | None:
        if self._stillborn is not None:
            return self._stillborn
        text = self._text.value()
        document = parse_document(text)
        if document.violation is not None:
            return document.violation
        if self.unique_keys and not REPEATED_NAMES_REFUSED:
            try:
                _UNIQUE.decode(text)
            except ValueError:
                return Violation("", "json", "a property name appears twice in one object")
        try:
            found = self.schema.violations(document.value)
        except ValueError:  # UnicodeEncodeError: a lone surrogate escape is not Unicode text
            return Violation("", "json", "a string holds a lone UTF-16 surrogate escape, which is not Unicode")
        return found[0] if found else None

    # --- the tokenizer ----------------------------------------------------------------------------------

    def _syntax(self, i: int, what: str) -> _Dead:
        self.violation = Violation("", "json", f"the answer is not valid JSON at character {self._base + i}: "
                                               f"{what}")
        return _Dead(i)

    def _run(self, text: str) -> None:
        n = len(text)
        i = 0
        while i < n:
            state = self._state
            if state == S_STR:
                m = _STR_STOP.search(text, i)
                j = n if m is None else m.start()
                if j > i:
                    if self._strack:
                        self._piece(text[i:j], i, False)
                    i = j
                    if i == n:
                        return
                c = text[i]
                if c == '"':
                    self._string_done(i)
                elif c == "\\":
                    self._state = S_ESC
                else:
                    raise self._syntax(i, "a control character inside a string")
                i += 1
                continue
            c = text[i]
            if c in " \t\n\r" and state < S_STR:
                i = _WS.match(text, i).end()  # type: ignore[union-attr]
                continue
            if state == S_AFTER:
                top = self._stack[-1]
                if top.is_obj:
                    if c == ",":
                        top.tok = None
                        top.next_cands = self._key_cands(top, i)
                        self._state = S_KEY
                    elif c == "}":
                        self._close(i)
                    else:
                        raise self._syntax(i, "expected ',' or '}'")
                elif c == ",":
                    top.next_cands = self._item_cands(top, i)
                    self._state = S_VALUE
                elif c == "]":
                    self._close(i)
                else:
                    raise self._syntax(i, "expected ',' or ']'")
                i += 1
            elif state == S_NUM:
                i = self._number(text, i, n)
            elif state <= S_ARR_FIRST:
                if c == "]" and state == S_ARR_FIRST:
                    self._close(i)
                    i += 1
                else:
                    i = self._value_start(c, i)
            elif state == S_COLON:
                if c != ":":
                    raise self._syntax(i, "expected ':'")
                self._state = S_VALUE
                i += 1
            elif state in (S_KEY, S_OBJ_FIRST):
                top = self._stack[-1]
                if c == '"':
                    if top.cands or (self.unique_keys and top is not _DEEP_OBJ):
                        cands = top.next_cands if state == S_KEY else self._key_cands(top, i)
                        top.next_cands = None
                        self._string_start(cands or [], i, True)
                    else:  # nothing is checked in this object: its names are skipped like any string
                        self._string_start([], i, False)
                        self._skey = True
                elif c == "}" and state == S_OBJ_FIRST:
                    self._close(i)
                else:
                    raise self._syntax(i, f"expected {_EXPECTED[state]}")
                i += 1
            elif state == S_ESC:
                if c == "u":
                    self._hex = ""
                    self._state = S_UESC
                elif c in _ESCAPES:
                    if self._strack:
                        self._piece(_ESCAPES[c], i, True)
                    self._state = S_STR
                else:
                    raise self._syntax(i, "an invalid escape in a string")
                i += 1
            elif state == S_UESC:
                i = self._unicode_escape(text, i, n)
            elif state == S_LIT:
                rest = self._lit
                k = min(len(rest), n - i)
                if not text.startswith(rest[:k], i):
                    bad = next(t for t in range(k) if text[i + t] != rest[t])
                    raise self._syntax(i + bad, "not a JSON literal (true, false or null)")
                i += k
                self._lit = rest = rest[k:]
                if not rest:
                    self._after_value()
            else:  # S_END
                raise self._syntax(i, "text after the document")

    def _number(self, text: str, i: int, n: int) -> int:
        sub = self._nsub
        while i < n:
            c = text[i]
            if "0" <= c <= "9":
                if sub in (N_INT, N_FRAC, N_EXP):
                    i = _DIGITS.match(text, i).end()  # type: ignore[union-attr]
                    continue
                if sub == N_ZERO:
                    raise self._syntax(i, "a number with a leading zero")
                sub = {N_MINUS: N_ZERO if c == "0" else N_INT, N_DOT: N_FRAC, N_E: N_EXP, N_ESIGN: N_EXP}[sub]
            elif c == "." and sub in (N_ZERO, N_INT):
                sub = N_DOT
            elif c in "eE" and sub in (N_ZERO, N_INT, N_FRAC):
                sub = N_E
            elif c in "+-" and sub == N_E:
                sub = N_ESIGN
            elif sub in (N_ZERO, N_INT, N_FRAC, N_EXP):  # the number ended before c
                self._nsub = sub
                self._number_done(i)
                return i
            else:
                raise self._syntax(i, "an unfinished number")
            i += 1
        self._nsub = sub
        return i

    def _unicode_escape(self, text: str, i: int, n: int) -> int:
        need = 4 - len(self._hex)
        j = min(n, i + need)
        ok = _HEX.match(text, i, j).end()  # type: ignore[union-attr]
        if ok < j:
            raise self._syntax(ok, "an invalid \\u escape in a string")
        self._hex += text[i:j]
        if len(self._hex) < 4:
            return j
        self._state = S_STR
        code = int(self._hex, 16)
        if self._strack:
            last = j - 1
            if self._hi and 0xDC00 <= code <= 0xDFFF:  # a pair is one character, as Python's json joins it
                high, self._hi = self._hi, ""
                self._piece(chr(0x10000 + ((ord(high) - 0xD800) << 10) + (code - 0xDC00)), last, True)
            elif 0xD800 <= code <= 0xDBFF:
                if self._hi:
                    self._piece("", last, True)
                self._hi = chr(code)
            else:
                self._piece(chr(code), last, True)
        return j

    # --- values starting and ending ---------------------------------------------------------------------

    def _value_start(self, c: str, i: int) -> int:
        """The value beginning with c at i; returns where reading goes on."""
        kind = _FIRST.get(c)
        if kind is None:
            raise self._syntax(i, f"expected {_EXPECTED[self._state]}" if self._stack or self._state != S_VALUE
                               else "text before the document")
        stack = self._stack
        if not stack:
            cands = self._root_cands
        else:
            top = stack[-1]
            if top.is_obj:
                cands = top.next_cands or []
            else:
                cands = top.next_cands if top.next_cands is not None else self._item_cands(top, i)
            top.next_cands = None
        if cands:
            for node, branch in cands:
                if not node.kinds & kind:
                    keyword = "type" if not node.type_kinds & kind else node.enum_kw
                    self._kill(branch, i, keyword, node.doc.get(keyword))
        if kind == K_STR:
            self._string_start(cands, i, False)
        elif kind == K_NUM:
            self._vcands = cands
            self._vstart = self._base + i
            text = self._cur
            m = _NUMBER.match(text, i)
            if m is not None:  # the whole number is here, and what follows cannot go on with it
                j = m.end()
                if j < len(text) and text[j] not in "0123456789.eE":
                    self._number_done(j)
                    return j
            self._nsub = N_MINUS if c == "-" else N_ZERO if c == "0" else N_INT
            self._state = S_NUM
        elif kind in (K_OBJ, K_ARR):
            if len(stack) < MAX_TRACKED_DEPTH:
                stack.append(_Frame(kind == K_OBJ, cands, self._base + i))
            else:
                stack.append(_DEEP_OBJ if kind == K_OBJ else _DEEP_ARR)
            self._state = S_OBJ_FIRST if kind == K_OBJ else S_ARR_FIRST
        else:
            self._vcands = cands
            self._lit, value = _LITERALS[c]
            for node, branch in cands:  # the first character says which value it is: judged there
                if node.final_kinds & kind and _live(branch) and not _valid(node, value):
                    self._kill_by_validator(node, branch, value, i)
            self._state = S_LIT
        return i + 1

    def _after_value(self) -> None:
        if self._stack:
            top = self._stack[-1]
            if not top.is_obj:
                top.count += 1
            self._state = S_AFTER
        else:
            self._state = S_END

    def _scalar_done(self, value: object, kind: int, i: int) -> None:
        for node, branch in self._vcands:
            if node.final_kinds & kind and _live(branch) and not _valid(node, value):
                self._kill_by_validator(node, branch, value, i)
        self._after_value()

    def _number_done(self, i: int) -> None:
        if any(node.final_kinds & K_NUM for node, _ in self._vcands):
            start = self._vstart - self._base
            raw = self._cur[start:i] if start >= 0 else self._text.slice(self._vstart, self._base + i)
            try:
                value: object = int(raw) if raw.isdigit() or raw[1:].isdigit() else float(raw)
            except ValueError:  # over Python's 4300 digits: parse_document refuses it at the end
                value = None
            if value is not None:
                self._scalar_done(value, K_NUM, i)
                return
        self._after_value()

    def _close(self, i: int) -> None:
        """The '}' or ']' at i ends the innermost container."""
        frame = self._stack.pop()
        kind = K_OBJ if frame.is_obj else K_ARR
        checks = [(node, branch) for node, branch in frame.cands if node.final_kinds & kind and _live(branch)]
        size = self._base + i + 1 - frame.start
        if checks and self._budget >= size:  # over budget (deep, recursive schemas): end() decides
            self._budget -= size
            try:
                value = json.loads(self._text.slice(frame.start, self._base + i + 1))
            except (ValueError, RecursionError):  # Python's digit limit, or deeper than its json goes
                checks = []
            for node, branch in checks:
                if not _valid(node, value):
                    self._kill_by_validator(node, branch, value, i)
        self._after_value()

    def _item_cands(self, frame: _Frame, i: int) -> list[Cand]:
        """The candidates of the item at index frame.count, known once that item must come or has begun."""
        index = frame.count
        seeds: list[Cand] = []
        for node, branch in frame.cands:
            if branch is not None and not _live(branch):
                continue
            if node.max_items is not None and index >= node.max_items:
                self._kill(branch, i, "maxItems", node.max_items, item=False)
            elif index < len(node.prefix_items):
                seeds.append((node.prefix_items[index], branch))
            elif node.items is not None:
                if node.items.false:
                    self._kill(branch, i, "items", False, item=False)
                else:
                    seeds.append((node.items, branch))
        if not seeds:
            return []
        memo = frame.memo
        if memo is not None and memo[0] == seeds:  # as the item before: same nodes, same branches
            return memo[1]
        groups = self._groups
        found = self._expand(seeds, i)
        if self._groups == groups:  # no anyOf/oneOf made new branches for that item: reusable
            frame.memo = (seeds, found)
        return found

    def _key_cands(self, frame: _Frame, i: int) -> list[Cand]:
        """The candidates of the next property name (propertyNames, the names additionalProperties: false
        leaves, the names a reached maxProperties leaves), known once a name must come or has begun."""
        seeds: list[Cand] = []
        names: list[Cand] = []
        for node, branch in frame.cands:
            if branch is not None and not _live(branch):
                continue
            if node.property_names is not None:
                seeds.append((node.property_names, branch))
            if node.key_node is not None:
                names.append((node.key_node, branch))
            if node.max_properties is not None and frame.count >= node.max_properties:
                if self.unique_keys:
                    self._kill(branch, i, "maxProperties", node.max_properties)
                names.append((Node.names(frame.keys, "maxProperties", node.max_properties), branch))
        cands = (self._expand(seeds, i) if seeds else []) + names
        for node, branch in cands:
            if not node.kinds & K_STR:
                keyword = "type" if not node.type_kinds & K_STR else node.enum_kw
                self._kill(branch, i, keyword, node.doc.get(keyword))
            elif node.str_enum == ():
                self._kill(branch, i, node.enum_kw, node.doc.get(node.enum_kw))
        return cands

    def _key_done(self, key: str, i: int) -> None:
        frame = self._stack[-1]
        repeated = key in frame.keys
        if repeated and self.unique_keys:
            self.violation = Violation(self._pointer(), "json", "a property name appears twice in one object")
            raise _Dead(i)
        if not repeated:
            frame.keys.add(key)
            frame.count += 1
        cands = frame.cands
        for node, branch in cands:
            if node.max_properties is not None and frame.count > node.max_properties and _live(branch):
                self._kill(branch, i, "maxProperties", node.max_properties)
        # What the name alone decides (its member's nodes, a name nothing takes) does not depend on the value:
        # objects that share their candidates (items of one array) share it.
        memo = self._members.get((id(cands), key))
        member = memo[1] if memo is not None and memo[0] is cands else self._member_cands(cands, key, i)
        frame.tok = key
        # A repeated key replaces the value before it (Python's json keeps the last), so unless repeated keys
        # are refused a member's value is only final when its object closes: it is judged then, as a whole.
        frame.next_cands = member if self.unique_keys else []
        self._state = S_COLON

    def _member_cands(self, cands: list[Cand], key: str, i: int) -> list[Cand]:
        seeds: list[Cand] = []
        for node, branch in cands:
            if branch is not None and not _live(branch):
                continue
            matched = False
            child = node.properties.get(key)
            if child is not None:
                seeds.append((child, branch))
                matched = True
            for matcher, pattern_node in node.patterns:
                if not matcher.is_valid({key: None}):
                    seeds.append((pattern_node, branch))
                    matched = True
            if not matched and node.additional is not None:
                if node.additional.false:
                    self._kill(branch, i, "additionalProperties", False)
                else:
                    seeds.append((node.additional, branch))
        groups = self._groups
        member = self._expand(seeds, i) if seeds else []
        if self._groups == groups:  # no new branches: the same for the next object with these candidates
            if len(self._members) >= 1024:
                self._members.clear()
            self._members[id(cands), key] = (cands, member)
        return member

    # --- strings ----------------------------------------------------------------------------------------

    def _string_start(self, cands: list[Cand], i: int, key: bool) -> None:
        self._scands = cands
        self._skey = key
        self._vstart = self._base + i
        self._slen = 0
        self._hi = ""
        smax = _BIG
        enums: list[tuple[list[str], Node, _Branch | None]] = []
        for node, branch in cands:
            if node.max_length is not None and node.max_length < smax:
                smax = node.max_length
            if node.str_enum is not None:
                enums.append((list(node.str_enum), node, branch))
        self._smax = smax
        self._enums = enums
        self._sparts = [] if key or enums else None
        self._strack = key or bool(enums) or smax < _BIG
        self._state = S_STR

    def _piece(self, s: str, i: int, escaped: bool) -> None:
        """Decoded characters `s` of the string, from text[i] on (or all from the escape ending at i)."""
        if self._hi:  # the high surrogate before s stands alone
            high, self._hi = self._hi, ""
            self._piece(high, i, True)
        before = self._slen
        after = self._slen = before + len(s)
        events: list[tuple[int, str, Node, _Branch | None]] = []
        if after > self._smax:
            smax = _BIG
            for node, branch in self._scands:
                limit = node.max_length
                if limit is None:
                    continue
                if limit < after:
                    events.append((0 if escaped else limit - before, "maxLength", node, branch))
                elif limit < smax:
                    smax = limit
            self._smax = smax
        if self._enums:
            kept: list[tuple[list[str], Node, _Branch | None]] = []
            for names, node, branch in self._enums:
                still = [name for name in names if name.startswith(s, before)]
                if still:
                    kept.append((still, node, branch))
                else:
                    reach = max((_common(name, before, s) for name in names), default=0)
                    events.append((0 if escaped else reach, node.enum_kw, node, branch))
            self._enums = kept
        if self._sparts is not None:
            self._sparts.append(s)
        if events:
            events.sort(key=lambda e: e[0])
            for at, keyword, node, branch in events:
                self._kill(branch, i + at, keyword, node.doc.get(keyword))

    def _string_done(self, i: int) -> None:
        """The closing quote at i."""
        if self._hi:
            high, self._hi = self._hi, ""
            self._piece(high, i, True)
        for names, node, branch in self._enums:
            if not any(len(name) == self._slen for name in names):
                self._kill(branch, i, node.enum_kw, node.doc.get(node.enum_kw))
        checks = [(node, branch) for node, branch in self._scands if node.final_kinds & K_STR and _live(branch)]
        value = ""
        if self._sparts is not None:
            value = "".join(self._sparts)
        elif checks:
            start = self._vstart - self._base
            raw = self._cur[start:i + 1] if start >= 0 else self._text.slice(self._vstart, self._base + i + 1)
            value = json.loads(raw)
        for node, branch in checks:
            if not _valid(node, value):
                self._kill_by_validator(node, branch, value, i)
        if self._skey:
            if self._sparts is not None:
                self._key_done(value, i)
            else:
                self._state = S_COLON
        else:
            self._after_value()

    # --- the schema cursor ------------------------------------------------------------------------------

    def _expand(self, seeds: list[Cand], i: int) -> list[Cand]:
        """The nodes that hold at a position: the seeds, what they reach through allOf and local $ref, and
        the alternatives of their anyOf/oneOf, each under a new branch. A `false` node kills its branch."""
        if len(seeds) == 1 and seeds[0][0].leaf:  # the usual case: one node, nothing to follow
            node, branch = seeds[0]
            return seeds if branch is None or _live(branch) else []
        out: list[Cand] = []
        seen: dict[int, list[_Branch | None]] = {}
        stack = seeds[::-1]
        pointer = None
        while stack and len(out) < MAX_CANDIDATES:
            node, branch = stack.pop()
            if node.trivial or (branch is not None and not _live(branch)):
                continue
            prior = seen.get(id(node))
            if prior is None:
                seen[id(node)] = [branch]
            elif _covered(prior, branch):
                continue
            else:
                prior.append(branch)
            if node.false:
                self._kill(branch, i, "false", False)
                continue
            out.append((node, branch))
            for child in node.conj[::-1]:
                stack.append((child, branch))
            for keyword, alternatives in node.groups:
                self._groups += 1
                if pointer is None:
                    pointer = self._pointer()
                group = _Group(branch, len(alternatives), keyword, pointer)
                for alternative in alternatives[::-1]:
                    stack.append((alternative, _Branch(group)))
        return out

    def _pointer(self) -> str:
        tokens: list[object] = []
        for frame in self._stack:
            if not frame.is_obj:
                tokens.append(frame.count)
            elif frame.tok is None:
                break
            else:
                tokens.append(frame.tok)
        return pointer_of(tokens)

    def _kill(self, branch: _Branch | None, i: int, keyword: str, schema_value: object, *, item: bool = True
              ) -> None:
        """`keyword` (with `schema_value`) fails at text[i] for a node under `branch`."""
        pointer = None
        while branch is not None:
            if branch.dead:
                return
            branch.dead = True
            group = branch.group
            group.alive -= 1
            if group.alive:
                return
            keyword, schema_value, pointer = group.keyword, None, group.pointer
            branch = group.owner
        if pointer is None:
            pointer = self._pointer()
            if not item and self._stack:  # a count or an item the array cannot take: the array is at fault
                pointer = pointer.rsplit("/", 1)[0]
        if keyword in ("anyOf", "oneOf"):
            detail = "matches none of the alternatives"
        else:
            detail = describe(keyword, schema_value, cast(jsonschema_rs.ValidationError, None))
        self.violation = Violation(pointer, keyword, detail)
        raise _Dead(i)

    def _kill_by_validator(self, node: Node, branch: _Branch | None, value: object, i: int) -> None:
        if branch is not None:
            self._kill(branch, i, "false", None)
            return
        error = None
        if node.validator is not None:
            try:
                error = next(iter(node.validator.iter_errors(value)), None)
            except (ValueError, RecursionError):
                error = None
        pointer = self._pointer()
        if error is None:
            self.violation = Violation(pointer, "false", "no value is allowed here")
        else:
            path = list(error.schema_path)
            keyword = str(path[-1]) if path else "false"
            detail = describe(keyword, _lookup(node.doc, path), error)
            self.violation = Violation(pointer + pointer_of(list(error.instance_path)), keyword, detail)
        raise _Dead(i)
