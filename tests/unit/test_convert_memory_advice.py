"""The mode and Lambda memory size `convert --compare` recommends, from given measurements: a small model gets the
least memory that holds it on one thread; a big model whose second thread more than halves its time gets the
memory that buys that thread; the memory always holds the peak RSS; only a mode that passed the gate is chosen."""
from __future__ import annotations

import json

import pytest

from convert import memory_advice
from convert.memory_advice import ModeRuntime, advise, candidate, parallel_share, warm_ms
from convert.report import Report, markdown
from convert.report_page import page
from convert.runtime_report import markdown as runtime_markdown
from convert.runtime_report import section


def runtime(mode="float32", passed=True, cold=0.3, one=0.05, two=0.06, rss=45.0, big=False) -> ModeRuntime:
    return ModeRuntime(mode=mode, passed=passed, cold_start_s=cold, first_invoke_ms=one * 3, warm_1_thread_ms=one,
                       warm_2_threads_ms=two, peak_rss_mb=rss, over_thread_line=big)


def test_a_small_model_gets_the_least_memory_and_one_thread():
    advice = advise([runtime()])
    assert (advice.mode, advice.memory_mb, advice.threads) == ("float32", 128, 1)
    # Its request costs less at 128 MB than at 1 vCPU: the 1 ms minimum bills a fast answer as a slow one.
    by_size = {found.memory_mb: found for found in advice.candidates["float32"]}
    assert by_size[128].cost_per_million_usd < by_size[1769].cost_per_million_usd < by_size[10240].cost_per_million_usd
    assert all(found.threads == 1 for found in advice.candidates["float32"])  # under the thread line: always one


def test_the_memory_holds_the_peak_rss_with_headroom():
    advice = advise([runtime(rss=300.0)])  # needs 300 * 1.2 + 40 = 400 MB
    assert advice.memory_mb == 512
    assert [found.fits for found in advice.candidates["float32"]][:3] == [False, False, True]


def test_a_big_model_whose_second_thread_more_than_halves_its_time_gets_two_vcpus():
    advice = advise([runtime(one=200.0, two=90.0, rss=500.0, big=True)])
    # 3,008 MB (1.7 vCPUs for two threads, 106 ms) costs what 3,538 MB (2 vCPUs, 90 ms) does, within 2%: the faster
    assert (advice.memory_mb, advice.threads) == (3538, 2)
    by_size = {found.memory_mb: found for found in advice.candidates["float32"]}
    assert by_size[3538].duration_ms == 90.0
    one_vcpu = min(by_size[1024].cost_per_million_usd, by_size[1769].cost_per_million_usd)
    assert advice.cost_per_million_usd < 0.97 * one_vcpu


def test_a_big_model_whose_second_thread_helps_less_stays_at_one_vcpu():
    """Two threads at 0.6x of one cost 1.2x the GB-seconds: one vCPU, and not less (below 1,769 MB the request takes
    longer in proportion for the same cost, so the tie goes to the faster answer)."""
    advice = advise([runtime(one=200.0, two=120.0, rss=500.0, big=True)])
    assert advice.memory_mb == 1769 and advice.threads == 1
    by_size = {found.memory_mb: found for found in advice.candidates["float32"]}
    assert by_size[1024].duration_ms == pytest.approx(200.0 * 1769 / 1024, rel=1e-3)
    assert by_size[3538].threads == 2 and by_size[3538].duration_ms == 120.0
    assert by_size[10240].threads == 6


def test_the_same_model_not_over_the_thread_line_never_gets_a_second_thread():
    advice = advise([runtime(one=200.0, two=90.0, rss=500.0, big=False)])
    assert advice.threads == 1 and advice.memory_mb == 1769


def test_beyond_two_threads_the_time_follows_amdahls_law():
    measured = runtime(one=100.0, two=60.0, big=True)
    assert parallel_share(100.0, 60.0) == pytest.approx(0.8)
    assert warm_ms(measured, 4) == pytest.approx(100.0 * (0.2 + 0.8 / 4))
    assert parallel_share(100.0, 130.0) == 0.0  # a slower second thread: nothing ran in parallel
    assert candidate(measured, 3008).threads == 2  # 1.7 vCPUs, two threads sharing them
    assert candidate(measured, 3008).duration_ms == pytest.approx(60.0 * 2 / (3008 / 1769), rel=1e-3)


def test_the_mode_is_the_cheapest_that_passed_and_a_tie_goes_to_the_faster_cold_start():
    runtimes = [runtime("float32", cold=0.40, one=20.0, two=19.0, rss=90.0),
                runtime("float16", cold=0.30, one=20.2, two=19.0, rss=80.0),
                runtime("dynamic", cold=0.20, one=35.0, two=30.0, rss=70.0),
                runtime("int8", passed=False, cold=0.10, one=5.0, two=5.0, rss=60.0)]
    advice = advise(runtimes)
    assert advice.mode == "float16"  # int8 is cheaper but failed; float16 ties float32 and starts faster
    assert "float32" in advice.reason and "0.30 s" in advice.reason
    assert advice.per_mode["int8"] is not None  # still measured and costed, only never recommended


def test_no_recommendation_without_a_passing_mode_or_a_size_that_holds_it():
    assert advise([runtime(passed=False)]).mode is None
    too_big = advise([runtime(rss=9000.0)])
    assert too_big.mode is None and "10,240 MB" in too_big.reason


def test_arm64_is_priced_as_arm64():
    x86 = candidate(runtime(one=100.0), 1769, "x86_64").cost_per_million_usd
    arm = candidate(runtime(one=100.0), 1769, "arm64").cost_per_million_usd
    assert arm < x86
    assert x86 == pytest.approx((1769 / 1024 * 0.1 * memory_advice.GB_SECOND_USD["x86_64"]
                                 + memory_advice.REQUEST_USD) * 1e6, rel=1e-3)


def test_the_report_shows_the_numbers_the_choice_used():
    runtimes = [runtime("float32", one=200.0, two=90.0, rss=500.0, big=True),
                runtime("int8", passed=False, one=100.0, two=60.0, rss=300.0, big=True)]
    block = json.loads(json.dumps(section(runtimes, advise(runtimes), "x86_64")))  # as report.json holds it
    assert block["recommendation"]["mode"] == "float32" and block["recommendation"]["memory_mb"] == 3538
    assert block["modes"][0]["warm_p50_ms"] == {"1": 200.0, "2": 90.0}
    text = runtime_markdown(block)
    assert "| float32 | pass | 0.30 s | 600.0 ms | 200.0 ms | 90.0 ms | 500 MB | yes | 3,538 MB, 2 threads |" in text
    assert "| int8 | FAIL |" in text
    assert "**Recommended: float32 at 3,538 MB (2 threads)" in text
    assert "| 3,538 MB | 2 | yes | 90.0 ms |" in text  # the sizes looked at for the recommended mode
    report = Report(name="big", task=None, saved_model="big", served_mode="float32", samples={"source": "generated",
                    "count": 4}, converter="tensorflow", runtime=block)
    assert text in markdown(report)
    html = page(json.loads(json.dumps(report.as_dict())), None)
    assert "Recommended: float32 at 3,538 MB (2 threads)" in html and "<td>3,538 MB, 2 threads</td>" in html
    assert "runtime and Lambda memory" not in page({**report.as_dict(), "runtime": None}, None)
