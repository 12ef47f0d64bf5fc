"""The one exception root of `rules`; every error carries its evidence (file, rule, field)."""

from __future__ import annotations


class RulesError(Exception):
    """Root of every error raised by the `rules` package."""


class RuleFileError(RulesError):
    """A rule file failed to load or validate. Names the file, the rule and the field."""

    def __init__(self, path: str, message: str, *, rule: str | None = None, field: str | None = None) -> None:
        self.path = path
        self.rule = rule
        self.field = field
        where = path
        if rule is not None:
            where += f": rule {rule!r}"
        if field is not None:
            where += f": field {field!r}"
        super().__init__(f"{where}: {message}")
