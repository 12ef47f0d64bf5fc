"""Hot reload: a RuleSet holds the current Scanner and swaps it atomically on reload (DESIGN section 3).

A reload compiles a complete new Scanner first; only when that succeeds is the reference swapped (one
attribute assignment, atomic under the GIL), so every scan sees either the old rules or the new ones, never a
mix. A bad file keeps the old rules live and the result says why. The start-up load is not forgiving: a bad
file then raises, because there are no old rules to fall back to (fail closed).
Call `reload()` off the event loop: compiling big word lists takes a while.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rules.errors import RulesError
from rules.findings import Detector, FindingFilter
from rules.scanner import Scanner


@dataclass(frozen=True, slots=True)
class ReloadResult:
    ok: bool
    version: str  # the version live after the reload (the old one when it failed)
    previous: str
    changed: bool  # the live rules are different now
    error: str | None = None  # why the new rules were refused (file, rule and field)


class RuleSet:
    """The live Scanner plus what is needed to rebuild it."""

    def __init__(self, paths: Sequence[str | Path] = (), *, builtin: bool = True,
                 extra_detectors: Sequence[Detector] = (), filters: Sequence[FindingFilter] = ()) -> None:
        self.paths = tuple(Path(p) for p in paths)
        self._builtin = builtin
        self._extra = tuple(extra_detectors)
        self._filters = tuple(filters)
        self._lock = threading.Lock()
        self._scanner = self._build()
        self._stamp = self._fingerprint()
        self.last_error: str | None = None

    def _build(self) -> Scanner:
        return Scanner.load(
            self.paths, builtin=self._builtin, extra_detectors=self._extra, filters=self._filters
        )

    def _fingerprint(self) -> str:
        h = hashlib.sha256()
        for p in self.paths:
            try:
                h.update(p.read_bytes())
            except OSError as exc:
                h.update(f"unreadable:{exc.errno}".encode())
            h.update(b"\0")
        return h.hexdigest()

    @property
    def scanner(self) -> Scanner:
        """The live rules; take one reference per request and use it throughout."""
        return self._scanner

    @property
    def version(self) -> str:
        return self._scanner.version

    def files_changed(self) -> bool:
        """True when a rule file's content differs from what was last loaded (for polling on change)."""
        return self._fingerprint() != self._stamp

    def reload(self) -> ReloadResult:
        """Rebuild from the files; swap on success, keep the old rules and report why on failure."""
        with self._lock:
            old = self._scanner
            stamp = self._fingerprint()
            try:
                new = self._build()
            except RulesError as exc:
                self.last_error = str(exc)
                self._stamp = stamp  # do not retry the same bad content on every poll
                return ReloadResult(False, old.version, old.version, False, str(exc))
            self._scanner = new
            self._stamp = stamp
            self.last_error = None
            return ReloadResult(True, new.version, old.version, new.version != old.version)
