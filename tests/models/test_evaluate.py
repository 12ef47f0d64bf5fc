"""models/evaluate.py: the evaluation sets are package data, found through importlib.resources."""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from importlib import resources
from pathlib import Path

import pytest

from models import evaluate

REPO = Path(__file__).resolve().parents[2]


def test_default_eval_sets_resolve_through_importlib_resources() -> None:
    package = resources.files("models")
    paths = evaluate.default_eval_paths()
    assert [p.name for p in paths] == list(evaluate.HELD_OUT_SETS)
    for path in paths:
        assert path == Path(str(package.joinpath("data", "eval", path.name)))
        assert path.is_file() and evaluate.load_items(path)
        assert not path.is_relative_to(REPO / "bench")  # bench/ is not in a wheel


def test_the_eval_sets_are_declared_package_data() -> None:
    """What a wheel carries of `models` is what pyproject.toml's package-data globs match."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    globs = config["tool"]["setuptools"]["package-data"]["models"]
    root = Path(str(resources.files("models")))
    for name in (*evaluate.HELD_OUT_SETS, *evaluate.DEVELOPMENT_SETS):
        relative = evaluate.data_path(name).relative_to(root).as_posix()
        assert any(fnmatch(relative, g) and relative.count("/") == g.count("/") for g in globs), relative


def test_a_blind_set_is_unread_while_its_description_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(evaluate, "data_path", lambda name: tmp_path / name)
    (tmp_path / "semantic_eval90.md").write_text(f"# eval90\n\n## Status\n\n{evaluate.UNREAD}\n", "utf-8")
    (tmp_path / "semantic_eval91.md").write_text("# eval91\n\n## First reading\n\n## Status\n\nRead once.\n", "utf-8")
    assert evaluate.unread("semantic_eval90.jsonl")
    assert not evaluate.unread("semantic_eval91.jsonl")
    assert not evaluate.unread("semantic_eval92.jsonl")  # no description: not a blind set
