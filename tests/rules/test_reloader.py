"""Reload swaps the compiled rules atomically; a bad file keeps the old rules and says why."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from rules.errors import RuleFileError
from rules.findings import Action
from rules.reloader import RuleSet


def test_reload_swaps_and_keeps_old_rules_on_error(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text("words: [{rule: w, words: [蓝莓派], level: 2}]", "utf-8")
    ruleset = RuleSet([site])
    first = ruleset.scanner
    assert first.scan("蓝莓派").action is Action.BLOCK
    assert not ruleset.files_changed()

    site.write_text("words: [{rule: w, words: [蓝莓派], level: 1}]", "utf-8")
    assert ruleset.files_changed()
    ok = ruleset.reload()
    assert ok.ok and ok.changed and ok.previous == first.version and ok.version == ruleset.version
    assert ruleset.scanner.scan("蓝莓派").action is Action.ANNOTATE
    assert first.scan("蓝莓派").action is Action.BLOCK  # an old reference still sees the old rules

    good = ruleset.scanner
    site.write_text("words: [{rule: w, words: [蓝莓派], level: 7}]", "utf-8")
    bad = ruleset.reload()
    assert not bad.ok and not bad.changed
    assert bad.error is not None and "site.yaml" in bad.error and "'w'" in bad.error and "'level'" in bad.error
    assert ruleset.scanner is good and ruleset.last_error == bad.error
    assert not ruleset.files_changed()  # the bad content is not retried on every poll

    site.write_text("patterns: [{rule: p, pattern: '(a)\\1'}]", "utf-8")
    assert not ruleset.reload().ok and ruleset.scanner is good


def test_startup_with_a_bad_file_raises(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text("- {rule: w, words: [x], level: 9}", "utf-8")
    with pytest.raises(RuleFileError):
        RuleSet([site])


def test_scans_during_reloads_see_whole_rule_sets(tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text("words: [{rule: w, words: [甲乙丙], level: 1}]", "utf-8")
    ruleset = RuleSet([site], builtin=False)
    errors: list[str] = []
    stop = threading.Event()

    def scan_loop() -> None:
        while not stop.is_set():
            actions = {ruleset.scanner.scan("甲乙丙").action}
            if not actions <= {Action.ANNOTATE, Action.BLOCK}:
                errors.append(str(actions))

    t = threading.Thread(target=scan_loop)
    t.start()
    for level in (2, 1, 2, 1):
        site.write_text(f"words: [{{rule: w, words: [甲乙丙], level: {level}}}]", "utf-8")
        assert ruleset.reload().ok
    stop.set()
    t.join()
    assert errors == []
