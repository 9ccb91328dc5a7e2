"""The embedded shared store: one SQLite file, expiry ignored by readers, corrupt rows never answered."""
import os
import sqlite3
import threading

from function.cache.sqlite import IDLE_CONNECTIONS, SqliteResultStore


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_hit_miss_and_a_second_store_on_the_same_file(tmp_path):
    path = tmp_path / "results.sqlite3"
    SqliteResultStore(path, ttl_seconds=60).put_many({"a": {"label": "cat"}, "b": {"label": "dog"}})
    reader = SqliteResultStore(path, ttl_seconds=60)
    assert reader.get_many(["a", "b", "c"]) == {"a": {"label": "cat"}, "b": {"label": "dog"}}
    assert reader.stats["hits"] == 2 and reader.stats["misses"] == 1


def test_file_is_in_wal_mode(tmp_path):
    path = tmp_path / "results.sqlite3"
    SqliteResultStore(path, ttl_seconds=60).put_many({"a": {"n": 1}})
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_only_a_durable_file_is_flushed(tmp_path):
    # PRAGMA synchronous: 0 OFF, 1 NORMAL. A store that is not durable answers the same, it only never fsyncs.
    for durable, synchronous in ((True, 1), (False, 0)):
        store = SqliteResultStore(tmp_path / f"{durable}.sqlite3", ttl_seconds=60, durable=durable)
        store.put_many({"a": {"n": 1}})
        assert store.get_many(["a"]) == {"a": {"n": 1}}
        with store._connection() as connection:
            assert connection.execute("PRAGMA synchronous").fetchone()[0] == synchronous
            assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_readers_ignore_expired_rows(tmp_path):
    clock = FakeClock()
    store = SqliteResultStore(tmp_path / "r.sqlite3", ttl_seconds=1, clock=clock)
    store.put_many({"a": {"n": 1}})
    entry = store.get_entries(["a"])["a"]
    assert entry.expires_at == clock.now + 1
    clock.now += 2
    assert store.get_many(["a"]) == {}
    assert store.stats["expired"] == 1


def test_a_corrupt_row_is_a_miss(tmp_path):
    path = tmp_path / "r.sqlite3"
    store = SqliteResultStore(path, ttl_seconds=60)
    store.put_many({"a": {"label": "cat"}, "b": {"label": "dog"}})
    with sqlite3.connect(path) as connection:
        # A half-written result: the JSON is cut short, the checksum is the old one.
        connection.execute("UPDATE results SET result = substr(result, 1, 5) WHERE result_key = 'a'")
    assert store.get_many(["a", "b"]) == {"b": {"label": "dog"}}
    assert store.stats["corrupt"] == 1


def test_large_batches_over_the_parameter_chunk(tmp_path):
    store = SqliteResultStore(tmp_path / "r.sqlite3", ttl_seconds=60)
    store.put_many({f"k{i}": {"i": i} for i in range(1200)})
    found = store.get_many([f"k{i}" for i in range(0, 1300)])
    assert len(found) == 1200 and found["k1199"] == {"i": 1199}


def test_unopenable_file_is_a_miss_and_counted(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the directory should be")
    store = SqliteResultStore(blocker / "r.sqlite3", ttl_seconds=60)
    store.put_many({"a": {"n": 1}})
    assert store.get_many(["a"]) == {}
    # The failed write opened the breaker: the read did not even try the file.
    assert store.stats["errors"] == 1 and store.stats["skipped"] == 1 and store.stats["misses"] == 1


def test_threads_share_one_file(tmp_path):
    store = SqliteResultStore(tmp_path / "r.sqlite3", ttl_seconds=60)
    errors = []

    def work(worker: int) -> None:
        for i in range(50):
            store.put_many({f"{worker}-{i}": {"worker": worker, "i": i}})
            if store.get_many([f"{worker}-{i}"]) != {f"{worker}-{i}": {"worker": worker, "i": i}}:
                errors.append((worker, i))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and store.stats["errors"] == 0
    assert len(store.get_many([f"{w}-{i}" for w in range(4) for i in range(50)])) == 200


def test_threads_racing_to_set_up_a_fresh_file(tmp_path):
    # Each round: a new file, two stores, eight threads released at once into their first call.
    for round_number in range(20):
        path = tmp_path / f"fresh-{round_number}.sqlite3"
        stores = [SqliteResultStore(path, ttl_seconds=60) for _ in range(2)]
        barrier = threading.Barrier(8)

        def first_use(worker: int) -> None:
            barrier.wait()
            stores[worker % 2].put_many({f"w{worker}": {"worker": worker}})

        threads = [threading.Thread(target=first_use, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert stores[0].stats["errors"] == stores[1].stats["errors"] == 0
        assert len(stores[0].get_many([f"w{n}" for n in range(8)])) == 8


def open_files_under(directory) -> int:
    return sum(1 for fd in os.listdir("/proc/self/fd")
               if os.path.realpath(f"/proc/self/fd/{fd}").startswith(str(directory)))


def test_short_lived_threads_do_not_leave_connections_open(tmp_path):
    # The local server runs each client connection on a new thread: connections must outlive none of them.
    store = SqliteResultStore(tmp_path / "r.sqlite3", ttl_seconds=60)
    for n in range(40):
        worker = threading.Thread(target=lambda n=n: (store.put_many({f"k{n}": {"n": n}}), store.get_many([f"k{n}"])))
        worker.start()
        worker.join()
    assert len(store.get_many([f"k{n}" for n in range(40)])) == 40
    # At most the pool's idle connections stay open: the database, its WAL and its shared-memory index each.
    assert open_files_under(tmp_path) <= 3 * IDLE_CONNECTIONS
    store.close()
    assert open_files_under(tmp_path) == 0
