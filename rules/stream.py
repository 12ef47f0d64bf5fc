"""Incremental scanning of streamed text with a bounded hold-back (DESIGN section 4).

`feed(delta)` appends to the unreleased text, asks the scanner where the shortest suffix begins that could
still grow into a match (`Scanner.viable_start`: prefix closures of the PII and rule patterns; for word
lists small enough to have a prefilter, fuzzy prefix closures over the base view, a superset of their exact
prefix set, which bigger lists check on the compact view), moves that point back to the start of any
finding that straddles it, and releases everything before it, masked exactly as `masking.apply` would mask
the whole text. Only the unreleased text plus `CONTEXT` released characters (for boundaries and context
words) are scanned again; released text is never rescanned from the start.

Bounds: the held suffix is at most `scanner.max_hold_back + 1` normalized characters (invisible characters
inside it come on top). Detectors without a bound are capped: the e-mail pattern at 153 characters, JWTs at
4,096, private key blocks at 8,192, rule patterns with unbounded repetition at 256 (UNBOUNDED_CAP in
rules/scanner.py); a longer match split across chunks may be missed while streaming.

Invariant (tested by splitting texts at every position): for a stream that is not blocked, the
concatenation of all released text equals `masking.apply(full, scanner.scan(full), vault)` for a fresh vault.
When a block decision is released, the text before the blocking finding is released (masked) but for a
masked region reaching into it, withheld whole, `blocked` becomes True, and everything after is withheld.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from rules import masking
from rules.findings import Action, Finding
from rules.normalize import Views, changing_chars
from rules.policy import Decision
from rules.pseudonym import PseudonymVault
from rules.scanner import ProbeAnswer, Scanner, held_chars

CONTEXT = 64  # released characters kept as left context: >= the PII context window (24) plus slack
# Unreleased texts up to this length have their probe answers remembered, at most ANSWERS_KEPT of them per
# scanner (the oldest go first; ~150 bytes each, ~10 MB when full): a token or two with a short held tail;
# longer ones rarely repeat. Streaming 6,204 distinct exemplar and evaluation texts cut into SentencePiece
# tokens, 76% of feeds were answered from memory with 16,384 kept, 87-89% with 65,536.
ANSWER_KEY_CHARS = 32
ANSWERS_KEPT = 65_536


def _encode(window: str, pending: str, off: int, clean: bool) -> tuple[bytes, int]:
    """A window's UTF-8 bytes, and the byte where the searches start: its unreleased text (from character
    `off`) while the stream is clean (the released context stays visible to them, for boundaries, but nothing
    in it can start a match any more), else the window's start."""
    data = window.encode("utf-8", "surrogatepass")
    if not clean:
        return data, 0
    return data, off if len(data) == len(window) else len(data) - len(pending.encode("utf-8", "surrogatepass"))


def _remember(answers: dict[str, ProbeAnswer], pending: str, answer: ProbeAnswer) -> None:
    if len(answers) >= ANSWERS_KEPT:
        del answers[next(iter(answers))]  # dicts keep insertion order: the oldest answer
    answers[pending] = answer


@dataclass(slots=True)
class StreamStep:
    """What one `feed`/`flush` releases: masked text, and the findings in it with offsets into the whole
    raw stream (not into `text`, which may be shorter or longer after masking). Treat as immutable; not
    `frozen` because one is built per streamed event and a frozen dataclass's __init__ costs ~1 us against
    ~0.3 us (object.__setattr__ per field)."""

    text: str
    findings: tuple[Finding, ...] = ()
    decisions: tuple[Decision, ...] = ()
    blocked: bool = False


# What a feed returns when it releases nothing: one shared value, no allocation per held-back delta.
NOTHING = StreamStep("")
BLOCKED = StreamStep("", blocked=True)


class StreamScanner:
    """Scans one stream. Not thread-safe: feed it from one thread (the stream callable).

    Cost per feed (the stream callable runs it once per SSE event, so it is the guard's per-chunk cost; an
    RE2 call costs ~0.7 us in the binding alone, more than matching ~100 characters): the delta is tested
    against the characters normalization rewrites (a window without any is its own base view, no search);
    one RE2 over the base view for the hold-back (PII closures and the word lists' fuzzy closures in one
    pattern); and, only when something is released, one re2.Set (`Scanner.scan_window`'s: the PII
    prefilters and the word prefilter together). Both search only the unreleased text when nothing released
    can still start a match (`_clean`), and are called through the scanner's `WindowProbe`, the binding's
    functions themselves: live, between two events mitmproxy's own work evicts our code and data from the
    caches, and each Python call and each searched byte then costs several times its in-process price.
    While nothing released can start a match, both answers depend on the unreleased text alone, so the
    probe remembers them by that text (`WindowProbe.answers`): a token seen before, with the same held tail,
    costs a dict lookup and no RE2 call. No lowered or compact view is built unless a word may match or rule
    patterns are loaded. A release without findings, the common case, allocates one StreamStep and touches
    no decision. In-process, builtin packs: ~5-6 us per feed when both RE2 calls run (was ~17 us with a full
    normalization, the word list's Python prefix loop and two prefilter calls), ~2.6 us when answered from
    memory."""

    __slots__ = ("_blocked", "_changing", "_clean", "_config", "_context", "_dirty_end", "_glued", "_limit", "_pending",
                 "_probe", "_released", "_scanner", "_vault")

    def __init__(self, scanner: Scanner, vault: PseudonymVault | None = None) -> None:
        self._scanner = scanner
        self._config = scanner.config
        self._vault = vault if vault is not None else PseudonymVault()
        self._released = 0  # raw characters released so far
        self._context = ""
        self._glued = False  # a released finding ends where the unreleased text starts (`_context_start`)
        self._pending = ""
        self._blocked = False
        self._limit = scanner.max_hold_back + 1
        self._probe = scanner.window_probe
        # Normalization is per code point, so a window whose characters are all left alone by it is its own
        # base view: only each delta is tested (`changing_chars`), and the window is searched again only
        # while it still holds a character fed at or before stream index `_dirty_end`.
        self._changing = changing_chars(self._config.traditional_to_simplified)
        self._dirty_end = 0  # stream index just past the last delta that held a character to rewrite
        # No suffix that starts in the released text can still grow into a match: viability is prefix-closed,
        # so text that was not viable when released never becomes so. Only a release forced by the bound (or
        # a flush) breaks it, until the next release decided by the hold-back itself.
        self._clean = True

    @property
    def blocked(self) -> bool:
        return self._blocked

    @property
    def pending(self) -> int:
        """Characters currently held back."""
        return len(self._pending)

    @property
    def held(self) -> str:
        """The raw text currently held back: the next release starts with it."""
        return self._pending

    def feed(self, delta: str) -> StreamStep:
        if self._blocked:
            return BLOCKED
        pending = self._pending + delta
        if not pending:
            return NOTHING
        context = self._context
        off = len(context)
        window = context + pending
        if not delta.isascii() and not self._changing.isdisjoint(delta):
            self._dirty_end = self._released + len(pending)
        excess = len(pending) - self._limit
        lo = off + excess if excess > 0 else off
        views: Views | None = None
        if self._dirty_end > self._released - off:
            views = Views(window, self._config)
        elif self._probe is not None:
            return self._feed_bytes(pending, window, off, lo, excess <= 0)
        else:
            views = Views.unchanged(window, self._config)
        cut = self._scanner.viable_start_views(views, lo) - off
        if cut <= 0:
            self._pending = pending
            return NOTHING
        self._clean = excess <= 0
        return self._release(cut, window, views, off)

    def _feed_bytes(self, pending: str, window: str, off: int, lo: int, decided: bool) -> StreamStep:
        """The common case: the window is its own base view and the scanner asks nothing of the others, so
        both questions (what to hold back, is anything there) are asked of its UTF-8 bytes, through the
        scanner's `WindowProbe`, whose answers for an unreleased text are remembered (`WindowProbe.answers`).
        `decided`: the bound does not force this release."""
        probe = self._probe
        assert probe is not None
        n = len(window)
        clean = self._clean  # as the stream enters this feed: it decides where the searches start
        answers = probe.answers if clean and len(pending) <= ANSWER_KEY_CHARS else None
        answer = answers.get(pending) if answers is not None else None
        data = b""
        from_byte = 0
        if answer is None:
            data, from_byte = _encode(window, pending, off, clean)
            answer = ProbeAnswer(held_chars(probe.tail, data, n, from_byte) if probe.tail is not None else 0)
            if answers is not None:
                _remember(answers, pending, answer)
        held = answer.held
        cut = (max(lo, n - held) if held else n) - off
        if cut <= 0:
            self._pending = pending
            return NOTHING
        self._clean = decided
        clear = answer.clear
        if clear is None:
            if not data:
                data, from_byte = _encode(window, pending, off, clean)
            # The Set over the unreleased text only. A candidate that reaches into it cannot start in the
            # released text (its closure, a prefix such as "Bearer " included, would have held it back; those
            # wholly in the released text were dealt with when released), and cut at the unreleased text the
            # Set can only find more (`^` and the prefilters' left boundaries accept the cut), never less.
            hits = probe.set_hits(data[from_byte:] if from_byte else data)
            clear = answer.clear = len(hits) == 1 and hits[0] == probe.sentinel
        if clear:
            return self._release_clear(cut, window, off)
        return self._release(cut, window, Views.unchanged(window, self._config, data or None), off)

    def flush(self) -> StreamStep:
        if self._blocked:
            return BLOCKED
        if not self._pending:
            return NOTHING
        window = self._context + self._pending
        self._clean = False  # everything is released, viable or not
        return self._release(len(self._pending), window, Views(window, self._config), len(self._context))

    def _release_clear(self, cut: int, window: str, off: int) -> StreamStep:
        """Nothing found: release the raw text up to the hold-back point as it is."""
        end = off + cut
        self._released += cut
        self._context = window[max(0, end - CONTEXT):end]
        self._glued = False
        self._pending = window[end:]
        return StreamStep(window[off:end])

    def _release(self, cut: int, window: str, views: Views, off: int) -> StreamStep:
        result = self._scanner.scan_window(window, off, views)
        if not result.decisions:  # covered findings come with the finding that covers them
            return self._release_clear(cut, window, off)
        end = off + cut
        # Covered findings are cut and masked like the others, but neither reported nor blocking
        # (rules/scanner.py).
        covered = result.covered
        hidden = {id(d) for d in covered}
        decisions = [*result.decisions, *covered] if covered else list(result.decisions)
        moved = True
        while moved:  # never cut through a finding: hold it back whole
            moved = False
            for d in decisions:
                if d.finding.start < end < d.finding.end:
                    end = d.finding.start
                    moved = True
        final = [d for d in decisions if d.finding.end <= end and d.finding.start < end]
        if len(final) < len(decisions):
            # A finding held back whole may have its cue in the released text (a label before a name, which
            # another kind's closure cut from it: "收件人：" released, "张三丰，" held as a name before a phone
            # number): the next windows are searched from their start, context included (`_clean`).
            self._clean = False
        regions = masking.rewrites(final)
        blocking = next((d for d in final if d.action is Action.BLOCK and id(d) not in hidden), None)
        text_end = end
        if blocking is not None:
            text_end = blocking.finding.start
            self._blocked = True
            # A region reaching past the blocking finding's start is withheld whole: released up to there, its
            # beginning would be in clear. Regions are disjoint: at most one straddles.
            for r in regions:
                if r.start < text_end < r.end:
                    text_end = r.start
            regions = [r for r in regions if r.end <= text_end]
        parts: list[str] = []
        pos = off
        for r in regions:
            parts.append(window[pos : r.start])
            parts.append(masking.replacement(window, r, self._vault))
            pos = r.end
        parts.append(window[pos:text_end])
        shift = self._released - off
        out_decisions = tuple(
            dataclasses.replace(d, finding=dataclasses.replace(
                d.finding, start=d.finding.start + shift, end=d.finding.end + shift
            ))
            for d in final if id(d) not in hidden
        )
        self._released += end - off
        self._context = window[self._context_start(end, off, final):end]
        self._pending = "" if self._blocked else window[end:]
        return StreamStep(
            text="".join(parts),
            findings=tuple(d.finding for d in out_decisions),
            decisions=out_decisions,
            blocked=self._blocked,
        )

    def _context_start(self, end: int, off: int, released: list[Decision]) -> int:
        """Where the released text kept as context starts in the window: CONTEXT characters back, or further
        back when released findings end where the unreleased text starts: a value starting there is judged
        with them found (rules/pii.py, glued values), so they are kept whole, each glued to the next, with
        the character before them (their left boundary) to be found again. At most the longest match further
        back: a longer chain of glued values may be judged differently while streaming."""
        if end == off:
            return 0  # nothing released: the context stays as it was
        start = max(0, end - CONTEXT)
        reach = end
        while True:
            back = min((d.finding.start for d in released if d.finding.end == reach), default=reach)
            if back >= reach:
                break
            reach = back
        was_glued, self._glued = self._glued, reach < end
        if not self._glued:
            return start
        # A chain from where the unreleased text started goes on into what the last release kept: keep it too.
        first = 0 if reach == off and was_glued else max(0, reach - 1)
        return max(min(start, first), end - CONTEXT - self._scanner.max_hold_back)
