"""Incremental Server-Sent Events framing over raw byte chunks (WHATWG HTML, "Server-sent events").

mitmproxy hands the stream callable raw upstream chunks, split anywhere (inside `data:`, inside a UTF-8
sequence). `SseFramer` buffers only the unfinished event and yields each complete event, with its exact raw
bytes, as soon as its terminating blank line arrives. Lines end in CRLF, LF or CR; a lone trailing CR is
held until the next byte says whether it starts a CRLF.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class SseEvent:
    """One event. Treat as immutable; not `frozen`: one is built per streamed event, and a frozen
    dataclass's __init__ costs ~1 us against ~0.3 us."""

    raw: bytes  # the event's exact bytes including its terminating blank line
    event: str | None  # the `event:` field, if any
    data: bytes | None  # the `data:` lines joined by LF, or None when the event has no data field

    @property
    def is_done(self) -> bool:
        return self.data == b"[DONE]"


def parse_event(raw: bytes) -> SseEvent:
    """Parse the fields of one complete event (comments and unknown fields are kept only in `raw`)."""
    # Fast path: nearly every event from an OpenAI-compatible server is one `data: ...` line ending in LF.
    if raw.startswith(b"data: ") and raw.endswith(b"\n\n") and raw.find(b"\n") == len(raw) - 2 \
            and b"\r" not in raw:
        return SseEvent(raw, None, raw[6:-2])
    event_name: str | None = None
    data_lines: list[bytes] = []
    has_data = False
    for line in raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"):
        if not line or line.startswith(b":"):
            continue
        name, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if name == b"data":
            has_data = True
            data_lines.append(value)
        elif name == b"event":
            event_name = value.decode("utf-8", "replace")
    return SseEvent(raw, event_name, b"\n".join(data_lines) if has_data else None)


class SseFramer:
    """Feed raw chunks, get complete events. Never rescans bytes it has already looked at."""

    __slots__ = ("_buf", "_line_empty", "_scan_from")

    def __init__(self) -> None:
        self._buf = bytearray()
        self._scan_from = 0  # everything before this offset holds no event boundary
        # Where `_boundary_general` stopped, with `_scan_from`: a chunk that continues a long event with CR line
        # ends resumes there instead of rescanning the event (a 256 KB event in 1 KB chunks cost 2.4 s of the
        # event loop, quadratically more for longer ones).
        self._line_empty = False

    @property
    def pending(self) -> int:
        """Bytes of an unfinished event held back."""
        return len(self._buf)

    def feed(self, chunk: bytes) -> list[SseEvent]:
        if not self._buf and chunk.endswith(b"\n\n") and b"\r" not in chunk:
            # One whole LF-only event and nothing buffered (what vLLM and the stand-in write per chunk): no
            # copy through the buffer. A single `data:` line is parse_event's own fast path, made here
            # without the call and its checks over again.
            last = len(chunk) - 2
            if chunk.find(b"\n") == last and chunk.startswith(b"data: "):
                return [SseEvent(chunk, None, chunk[6:last])]
            if chunk.find(b"\n\n") == last:
                return [parse_event(chunk)]
        if b"\r" not in chunk and (not self._buf or b"\r" not in self._buf):
            return self._feed_lf(chunk)
        self._buf += chunk
        events: list[SseEvent] = []
        while True:
            end = self._boundary()
            if end < 0:
                break
            events.append(parse_event(bytes(self._buf[:end])))
            del self._buf[:end]
            self._restart()
        return events

    def _feed_lf(self, chunk: bytes) -> list[SseEvent]:
        """LF-only bytes (what every OpenAI-compatible server writes): the events of a read carrying many
        (llama.cpp's server, a busy vLLM) are sliced out of one bytes object, each found by one `find`,
        instead of copied through the buffer and deleted from its front one at a time (quadratic in the
        events of a read)."""
        buf = self._buf
        held = len(buf)
        if held:
            # The search resumes one byte before where it stopped: a blank line may straddle the two pieces.
            start = max(self._scan_from - 1, 0)
            data = bytes(buf) + chunk
        else:
            start = 0
            data = chunk
        events: list[SseEvent] = []
        pos = 0
        while True:
            end = data.find(b"\n\n", start)
            if end < 0:
                break
            end += 2
            # parse_event's fast path, known LF-only here: one `data: ` line.
            if data.startswith(b"data: ", pos) and data.find(b"\n", pos, end) == end - 2:
                events.append(SseEvent(data[pos:end], None, data[pos + 6:end - 2]))
            else:
                events.append(parse_event(data[pos:end]))
            pos = start = end
        if pos or not held:
            buf.clear()
            buf += data[pos:] if pos else data
        else:
            buf += chunk
        n = len(buf)
        self._scan_from = n
        self._line_empty = n > 0 and buf[n - 1] == 0x0A
        return events

    def _restart(self) -> None:
        self._scan_from = 0
        self._line_empty = False

    def take_pending(self) -> bytes:
        """The unfinished event's bytes, handed over and forgotten: framing starts again after them."""
        rest = bytes(self._buf)
        self._buf.clear()
        self._restart()
        return rest

    def flush(self) -> list[SseEvent]:
        """At end of stream: whatever is left, as a last event. It may lack its blank line (the spec drops
        such an event; a proxy passes its bytes on), or end in a CR that no longer waits for an LF."""
        rest = self.take_pending()
        return [parse_event(rest)] if rest else []

    def _boundary(self) -> int:
        """Offset just past the first blank line (end of an event), or -1."""
        buf = self._buf
        if b"\r" not in buf:  # the common case: LF only
            pos = buf.find(b"\n\n", max(self._scan_from - 1, 0))
            if pos < 0:
                # What `_boundary_general` needs to resume here, should a CR arrive.
                n = len(buf)
                self._scan_from = n
                self._line_empty = n > 0 and buf[n - 1] == 0x0A
                return -1
            return pos + 2
        return self._boundary_general()

    def _boundary_general(self) -> int:
        """Any of CRLF, LF and CR ends a line, and an event ends with the first line end that follows another
        (as `find(b"\\n\\n")` decides for LF-only streams, also at the very start). Resumes where the previous
        call stopped."""
        buf = self._buf
        i = self._scan_from
        n = len(buf)
        line_empty = self._line_empty  # a line end just passed: another one ends the event
        # The next CR and LF at or after i (n: none), each searched again only once passed: a line of content is
        # skipped in C, and the searches stay linear however the two line ends are mixed.
        next_cr = next_lf = -1
        while i < n:
            b = buf[i]
            if b in {10, 13}:
                if b == 0x0D:
                    if i + 1 >= n:
                        break  # a CR at the end: wait to see whether LF follows (it is scanned again)
                    if buf[i + 1] == 0x0A:
                        i += 1
                if line_empty:
                    return i + 1
                line_empty = True
            else:
                line_empty = False
                if next_cr < i:
                    next_cr = buf.find(b"\r", i) % (n + 1)  # -1 (none) becomes n
                if next_lf < i:
                    next_lf = buf.find(b"\n", i) % (n + 1)
                i = min(next_cr, next_lf)  # the rest of the content line, skipped
                continue
            i += 1
        self._scan_from, self._line_empty = i, line_empty
        return -1
