"""Run by the Lambda runtime's own Python in place of `python -m awslambdaric HANDLER`: the real runtime client,
with one more before-snapshot hook, registered first so that it runs last (the runtime client runs them in reverse
order), after every hook of the function's. It forks: parent and child are two copies "restored" from one
initialised process, each then asking for restore/next, running the after-restore hooks and serving.

After the function's own after-restore hooks, each copy writes what must differ between copies to
$SNAPSTART_REPORT_DIR/<pid>.json: a random draw (random, numpy), a uuid4, and every socket and file it has open.
Imports only what the runtime's venv holds: it runs outside this repo's test environment.
"""
import json
import os
import random
import sys
import uuid

import snapshot_restore_py


def open_files() -> dict[str, str]:
    found = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            found[fd] = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    return found


def report() -> None:
    import numpy as np

    path = os.path.join(os.environ["SNAPSTART_REPORT_DIR"], f"{os.getpid()}.json")
    with open(path, "w") as sink:
        json.dump({"pid": os.getpid(), "random": random.random(), "numpy": float(np.random.random()),
                   "uuid": str(uuid.uuid4()), "open": open_files()}, sink)


def fork_copies() -> None:
    import numpy as np

    np.random.random()  # numpy's global generator made and drawn from before the snapshot, as any init may do
    with open(os.path.join(os.environ["SNAPSTART_REPORT_DIR"], "snapshot.json"), "w") as sink:
        json.dump({"pid": os.getpid(), "open": open_files()}, sink)  # what the snapshot itself holds open
    os.fork()
    snapshot_restore_py.register_after_restore(report)  # now: after the function's own after-restore hooks


snapshot_restore_py.register_before_snapshot(fork_copies)

from awslambdaric.__main__ import main  # noqa: E402  (after the hook: the handler's import registers the others)

main(["awslambdaric", sys.argv[1]])
