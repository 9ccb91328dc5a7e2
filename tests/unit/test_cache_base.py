"""The base class every store shares: expiry, decoding and the counters, over a backend that only keeps raw
records. The backend here is a plain dict, so each verdict is the base class's own."""
from function.cache.base import BaseResultStore, Entry, Record
from function.cache.codec import encode_result


class DictStore(BaseResultStore):
    name = "dict"

    def __init__(self, now: list[float]) -> None:
        super().__init__(ttl_seconds=10, clock=lambda: now[0])
        self.records: dict[str, Record] = {}
        self.deleted: list[str] = []
        self.extra: list[tuple[str, Record]] = []  # records a broken backend answers beyond those asked for

    def _get_records(self, keys):
        return [(key, self.records[key]) for key in keys if key in self.records] + self.extra

    def _put_records(self, records):
        self.records.update(records)
        return len(records)

    def _delete_records(self, records):
        self.deleted += list(records)


def test_hits_misses_and_writes_are_counted_once_per_distinct_key():
    store = DictStore([1000.0])
    store.put_many({"a": {"n": 1}}, model_version="v1")
    assert store.records["a"].model_version == "v1" and store.records["a"].expires_at == 1010
    assert store.get_many(["a", "a", "b"]) == {"a": {"n": 1}}
    assert [store.stats[name] for name in ("writes", "hits", "misses")] == [1, 1, 1]


def test_an_expired_record_is_a_miss_and_handed_back_for_deletion():
    now = [1000.0]
    store = DictStore(now)
    store.put_many({"a": {"n": 1}})
    now[0] = 1010.0  # expiry is exclusive: at expires_at the record is already gone
    assert store.get_entries(["a"]) == {}
    assert store.stats["expired"] == 1 and store.stats["misses"] == 1 and store.deleted == ["a"]


def test_a_record_whose_checksum_fails_or_that_was_not_asked_for_is_corrupt():
    store = DictStore([1000.0])
    text, checksum = encode_result({"n": 1})
    store.records["torn"] = Record(text[:-2], checksum, 2000.0)
    store.records["list"] = Record(*encode_result([1]), 2000.0)  # checksummed, but not a JSON object
    store.extra = [("stranger", Record(text, checksum, 2000.0))]
    assert store.get_many(["torn", "list"]) == {}
    assert store.stats["corrupt"] == 3 and store.stats["misses"] == 2 and store.stats["hits"] == 0


def test_entries_keep_the_expiry_they_carry_and_results_that_are_not_json_are_errors():
    store = DictStore([1000.0])
    store.put_entries({"a": Entry({"n": 1}, 1003.0), "nan": Entry({"x": float("nan")}, 1003.0)})
    assert store.get_entries(["a"]) == {"a": Entry({"n": 1}, 1003.0)}
    assert store.stats["errors"] == 1 and store.stats["writes"] == 1 and "nan" not in store.records
