"""The in-process LRU: bounded, TTL-aware, isolated from callers' edits, safe across threads."""
import threading

from function.cache.base import Entry
from function.cache.memory import MemoryResultStore


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_hit_and_miss():
    store = MemoryResultStore(max_items=10, ttl_seconds=60)
    store.put_many({"a": {"label": "cat", "score": 0.9}})
    assert store.get_many(["a", "b"]) == {"a": {"label": "cat", "score": 0.9}}
    assert store.stats["hits"] == 1 and store.stats["misses"] == 1


def test_least_recently_used_goes_first():
    store = MemoryResultStore(max_items=2, ttl_seconds=60)
    store.put_many({"a": {"n": 1}, "b": {"n": 2}})
    store.get_many(["a"])  # a is now more recent than b
    store.put_many({"c": {"n": 3}})
    assert set(store.get_many(["a", "b", "c"])) == {"a", "c"}
    assert len(store) == 2


def test_expired_entries_are_misses():
    clock = FakeClock()
    store = MemoryResultStore(max_items=10, ttl_seconds=5, clock=clock)
    store.put_many({"a": {"n": 1}})
    clock.now += 4.9
    assert store.get_many(["a"]) == {"a": {"n": 1}}
    clock.now += 0.2
    assert store.get_many(["a"]) == {}
    assert store.stats["expired"] == 1 and len(store) == 0


def test_put_entries_keeps_the_given_expiry():
    clock = FakeClock()
    store = MemoryResultStore(max_items=10, ttl_seconds=3600, clock=clock)
    store.put_entries({"a": Entry({"n": 1}, clock.now + 2)})
    clock.now += 3
    assert store.get_many(["a"]) == {}


def test_callers_cannot_edit_the_cache_through_results():
    store = MemoryResultStore(max_items=10, ttl_seconds=60)
    result = {"labels": ["cat"]}
    store.put_many({"a": result})
    result["labels"].append("dog")
    store.get_many(["a"])["a"]["cached"] = True
    assert store.get_many(["a"]) == {"a": {"labels": ["cat"]}}


def test_unserialisable_result_is_counted_not_raised():
    store = MemoryResultStore(max_items=10, ttl_seconds=60)
    store.put_many({"nan": {"score": float("nan")}, "ok": {"score": 1.0}})
    assert store.get_many(["nan", "ok"]) == {"ok": {"score": 1.0}}
    assert store.stats["errors"] == 1


def test_zero_capacity_stores_nothing():
    store = MemoryResultStore(max_items=0, ttl_seconds=60)
    store.put_many({"a": {"n": 1}})
    assert store.get_many(["a"]) == {}


def test_concurrent_writers_and_readers_keep_the_bound():
    store = MemoryResultStore(max_items=50, ttl_seconds=60)
    errors = []

    def work(worker: int) -> None:
        try:
            for i in range(300):
                key = f"{worker}-{i % 80}"
                store.put_many({key: {"worker": worker, "i": i % 80}})
                got = store.get_many([key])
                if key in got and got[key]["worker"] != worker:
                    errors.append(got)
        except Exception as error:  # a thread's exception would otherwise vanish
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store) == 50
