"""Many threads sharing one warm service (and so one interpreter per model) get exactly the sequential answers."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from function.cache.base import NullResultStore
from function.config import ServiceSettings
from function.service import Service
from tests.support.function_fixtures import call, demo_models, registry  # noqa: F401
from kit.photos import b64, encode, photo

THREADS = 8
ROUNDS = 6


def test_eight_threads_get_identical_answers(registry):  # noqa: F811
    # No result cache: every request really runs the shared interpreters.
    service = Service(ServiceSettings.from_env({}, model_dir=registry.model_dir), NullResultStore(), registry)
    requests = [
        ("/classify", {"image": b64(encode(photo(name).resize((320, 240)), "JPEG", quality=90))})
        for name in ("chelsea", "coffee", "astronaut", "rocket")
    ] + [
        ("/classify", {"images": [b64(encode(photo("coffee"), "PNG")), b64(encode(photo("chelsea"), "PNG"))]}),
        ("/sentiment", {"texts": ["A lovely, warm film.", "Tedious and dull."]}),
        ("/tokenize", {"text": "Threads share one tokenizer."}),
    ]
    expected = [call(service, "POST", path, body) for path, body in requests]
    assert all(status == 200 for status, _ in expected)

    def worker(offset: int) -> list:
        answers = []
        for round_ in range(ROUNDS):
            index = (offset + round_) % len(requests)
            answers.append((index, call(service, "POST", *requests[index])))
        return answers

    with ThreadPoolExecutor(THREADS) as pool:
        results = [answer for answers in pool.map(worker, range(THREADS)) for answer in answers]
    assert len(results) == THREADS * ROUNDS
    for index, answer in results:
        assert answer == expected[index], requests[index][0]
