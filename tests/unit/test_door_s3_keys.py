"""The doors' one result key for an object (function/door_s3.py): two different objects (bucket, key, version)
never share one, whichever door read them, and a key S3 would not take is told apart."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from function.door_s3 import fits, is_result_id, object_result_key

BUCKETS = st.from_regex(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", fullmatch=True)  # S3's bucket naming rules
KEYS = st.text(min_size=1, max_size=40)
VERSIONS = st.one_of(st.none(), st.text(min_size=1, max_size=20))
OBJECTS = st.tuples(BUCKETS, KEYS, VERSIONS)


@settings(max_examples=500)
@given(first=OBJECTS, second=OBJECTS)
def test_two_objects_never_share_a_result_key(first, second):
    if first != second:
        assert object_result_key("p/", *first) != object_result_key("p/", *second)


def test_the_layout_is_the_documented_one():
    assert object_result_key("predictions/", "acme", "uploads/cat.jpg") == "predictions/acme/uploads/cat.jpg.json"
    assert object_result_key("predictions/", "acme", "a.png", "v/1+2") == "predictions/acme@v%2F1%2B2/a.png.json"


def test_a_key_past_s3s_limit_and_an_id_that_cannot_name_a_key_are_told():
    assert fits("p/" + "k" * 1022) and not fits("p/" + "k" * 1023) and not fits("p/" + "é" * 512)
    assert is_result_id("reviews/2026/42") and not is_result_id("../escape") and not is_result_id("a//b")
