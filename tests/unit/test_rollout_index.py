"""The index's labels (function/catalog/published.py) and publish's edits of them (convert/rollout.py): an index
written before labels reads as a stable version alone; labels, weights and the previous stable survive a round trip;
promote and rollback move exactly the versions they say; a malformed label section is refused; the weighted choice
(function/catalog/rollout.py) depends on the inputs alone."""
from __future__ import annotations

import json

import pytest

from convert.rollout import RolloutError, labelled, promoted, rolled_back
from function.catalog.published import ModelIndexError, PublishedModel, index_bytes, parse_index
from function.catalog.rollout import Rollout

V1, V2, V3 = "1" * 64, "2" * 64, "3" * 64


def version(v: str) -> PublishedModel:
    return PublishedModel("digits", v, {"model.tflite": 10}, {"name": "digits", "v": v})


def round_trip(entries):
    return parse_index(index_bytes(entries), "test")


def test_an_index_written_before_labels_reads_as_its_stable_version_alone():
    old = {"schema": 1, "models": {"digits": version(V1).as_json()}}
    entry = parse_index(json.dumps(old).encode(), "test")["digits"]
    assert (entry.stable, entry.labels, entry.weights, entry.previous_stable) == (version(V1), {}, {}, None)
    assert json.loads(index_bytes({"digits": entry}))["models"]["digits"] == version(V1).as_json()


def test_a_canary_then_promote_then_rollback():
    entries = labelled({}, version(V1), "stable", None)
    entries = round_trip(labelled(entries, version(V2), "canary", 10))
    entry = entries["digits"]
    assert (entry.stable.version, entry.labels, entry.weights, entry.others) == (V1, {"canary": V2}, {"canary": 10},
                                                                                 {V2: version(V2)})
    entries = round_trip(promoted(entries, "digits", "canary"))
    entry = entries["digits"]
    assert (entry.stable.version, entry.labels, entry.weights, entry.previous_stable) == (V2, {}, {}, version(V1))
    entries = round_trip(rolled_back(entries, "digits"))
    entry = entries["digits"]
    assert (entry.stable.version, entry.labels, entry.previous_stable, entry.others) == (V1, {}, None, {})
    with pytest.raises(RolloutError, match="no previous stable"):
        rolled_back(entries, "digits")


def test_a_new_stable_keeps_the_old_one_for_rollback_and_only_labelled_versions_stay_listed():
    entries = labelled(labelled({}, version(V1), "stable", None), version(V2), "stable", None)
    entries = round_trip(labelled(entries, version(V3), "stable", None))
    entry = entries["digits"]
    assert (entry.stable.version, entry.previous_stable.version, set(entry.others)) == (V3, V2, {V2})


@pytest.mark.parametrize(("label", "weight", "problem"), [
    ("Canary", 10, "not a label"), ("stable", 10, "--weight goes with another label"), ("canary", 101, "0 to 100"),
])
def test_a_label_or_weight_publish_refuses(label, weight, problem):
    with pytest.raises(RolloutError, match=problem):
        labelled({"digits": labelled({}, version(V1), "stable", None)["digits"]}, version(V2), label, weight)


def test_weights_over_100_percent_and_a_label_without_a_stable_version_are_refused():
    entries = labelled(labelled({}, version(V1), "stable", None), version(V2), "canary", 60)
    with pytest.raises(RolloutError, match="over 100%"):
        labelled(entries, version(V3), "beta", 50)
    with pytest.raises(RolloutError, match="no stable version yet"):
        labelled({}, version(V2), "canary", 10)


@pytest.mark.parametrize("extra", [
    {"labels": {"canary": V2}},  # a version the entry does not list
    {"labels": {"canary": V1}, "weights": {"canary": 101}},
    {"labels": {"canary": V1}, "weights": {"beta": 5}},  # a weight without its label
    {"labels": {"stable": V2}, "versions": {V2: {"path": f"digits/{V2}/", "manifest": {}}}},
    {"previous_stable": V3},
    {"versions": {V2: {"path": "../../", "manifest": {}}}},
])
def test_a_malformed_label_section_is_refused(extra):
    entry = {**version(V1).as_json(), **extra}
    with pytest.raises(ModelIndexError):
        parse_index(json.dumps({"schema": 1, "models": {"digits": entry}}).encode(), "test")


class FakeTask:
    def __init__(self, v: str) -> None:
        self.manifest = type("Manifest", (), {"version": v})()


def test_the_weighted_choice_depends_on_the_inputs_alone_and_a_stopped_label_gives_way_to_stable():
    stable, canary = FakeTask(V1), FakeTask(V2)
    rollout = Rollout("digits", stable, {"canary": canary}, {"canary": 30})
    picks = [rollout.choose([f"input {i}"])[1] for i in range(1000)]
    assert picks == [rollout.choose([f"input {i}"])[1] for i in range(1000)]
    assert 230 < sum(pick is canary for pick in picks) < 370
    rollout.stop("canary", "could not load")
    assert all(rollout.choose([f"input {i}"])[1] is stable for i in range(1000))
