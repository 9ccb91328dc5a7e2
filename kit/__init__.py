"""What the tests (tests/) and the benchmarks (bench/) share: emulators, fake AWS servers, event, photo and model
builders. Development only: neither the wheel nor the Lambda image holds it. It imports from neither tests/ nor bench/,
and neither of those imports from the other (tests/unit/test_kit_boundary.py)."""
