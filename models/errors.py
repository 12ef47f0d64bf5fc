"""The one exception root of `models`; errors carry their evidence (file, expected vs found)."""

from __future__ import annotations


class ModelsError(Exception):
    """Root of every error raised by the `models` package."""


class ModelFileError(ModelsError):
    """The pinned source model file is missing, altered or malformed."""


class BuildError(ModelsError):
    """The model build failed or its cached outputs do not match their manifest."""


class CategoryFileError(ModelsError):
    """A category rule file failed to load or validate. Names the file, the category and the field."""

    def __init__(self, path: str, message: str, *, category: str | None = None, field: str | None = None) -> None:
        self.path = path
        self.category = category
        self.field = field
        where = path
        if category is not None:
            where += f": category {category!r}"
        if field is not None:
            where += f": field {field!r}"
        super().__init__(f"{where}: {message}")
