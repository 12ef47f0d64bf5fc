"""A small thread-safe least-recently-used map: the semantic detector's per-text results and the runtime's
per-window encoder outputs (several worker threads share one detector and one runtime)."""

from __future__ import annotations

import threading
from collections import OrderedDict


class Lru[K, V]:
    __slots__ = ("_items", "_lock", "_size")

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value, now the most recently used; None when absent."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
            return hit

    def put(self, key: K, value: V) -> None:
        """Remember `value`, dropping the least recently used entries beyond the size."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
