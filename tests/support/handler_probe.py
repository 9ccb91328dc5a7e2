"""Run inside the runtime under test (any Python, any architecture): import the Lambda handler as the runtime client
would, hand it each event of the JSON list on stdin, write {"machine": the CPU it ran on, "answers": [...]} to ANSWERS
(stdout carries the function's own log lines).

    python tests/support/handler_probe.py ANSWERS < events.json   (with the task root on PYTHONPATH)

Standard library only, and no import from tests/: it runs on the emulated arm64 Python (tests/support/arm64.py).
"""
import json
import platform
import sys
import types


def main() -> int:
    import function.app  # the Dockerfile's CMD, function.app.handler

    answers = []
    for number, event in enumerate(json.load(sys.stdin)):
        context = types.SimpleNamespace(aws_request_id=f"probe-{number}", function_name="probe")
        answers.append(function.app.handler(event, context))
    with open(sys.argv[1], "w", encoding="utf-8") as output:
        json.dump({"machine": platform.machine(), "answers": answers}, output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
