from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from models.lru import Lru


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the least recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


def test_threads_never_grow_it_past_its_size() -> None:
    cache: Lru[int, int] = Lru(8)

    def work(start: int) -> None:
        for i in range(start, start + 500):
            cache.put(i % 20, i)
            cache.get((i + 3) % 20)

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(0, 2000, 500)))
    assert len(cache) == 8
