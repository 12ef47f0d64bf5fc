"""Type stub of the C module rules/_compact.c."""

from collections.abc import Callable

def compact(
    text: str, skip_chars: str, max_skip: int, cjk_letters: bool, is_letter: Callable[[str], bool], /
) -> tuple[str, list[int], list[int], list[int], list[int]] | None: ...
