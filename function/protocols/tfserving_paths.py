"""TensorFlow Serving's REST paths as its own handler reads them (tensorflow_serving/model_servers/
http_rest_api_handler.cc and http_rest_api_util.cc): every /v1/ path is its own, a version is decimal digits that
must fit an int64, and anything else is InvalidArgument, HTTP 400 {"error": "Malformed request: <method> <path>"}.
No model is looked up here; the router (function/router.py) and the TF Serving routes use it."""
from __future__ import annotations

import re

from function.errors import ServingError, quoted, refuse

INT64_MAX = 2 ** 63 - 1
# TF Serving's other two methods, which take Example protos: a LiteRT model has no such signature. A pattern string,
# compiled by the first malformed path rather than by the init (0.2 ms).
EXAMPLE_METHOD = r"/v1/models/[^/:]+(?:/versions/([0-9]+)|/labels/[^/:]+)?:(classify|regress)"


def check_int64_version(version: str) -> int:
    """A TF Serving version (decimal digits, by the route's pattern) as the int64 it must be; 0050 is 50."""
    digits = version.lstrip("0") or "0"
    if len(digits) > 19 or int(digits) > INT64_MAX:  # the length first: int() refuses over 4,300 digits
        raise refuse("malformed_request", f"Failed to convert version: {quoted(version, 40)} to numeric.")
    return int(digits)


def tf_serving_malformed(method: str, path: str) -> ServingError:
    """What TF Serving's REST handler answers for a /v1/ path or method it does not serve: InvalidArgument, 400."""
    example = re.fullmatch(EXAMPLE_METHOD, path)
    if example and method == "POST":
        if example[1] is not None:
            check_int64_version(example[1])
        return refuse("malformed_request", f"This server answers :predict only; :{example[2]} takes TensorFlow "
                      "Example protos, which a LiteRT model cannot read.")
    return refuse("malformed_request", f"Malformed request: {quoted(method, 20)} {quoted(path, 120)}")
