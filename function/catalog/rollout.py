"""A model's labelled versions beside its stable one, and which version answers a request that names none.

A label with a weight (a canary at 10) takes that percent of those inputs, chosen by a hash of each input
(function/inference.py asks per input): the same input always gets the same version, alone or in any batch, so each
cache entry (keyed by version) is only ever computed by the version that serves its input. A labelled version that
cannot be served, or that fails to load or answers a 5xx when chosen, is taken out of the weighted choice until the
index changes: the stable version answers those requests, and GET /models says why.
"""
from __future__ import annotations

from collections.abc import Sequence

from function.digest import sha256
from function.tasks.base import Task

STABLE = "stable"
BUCKETS = 10_000  # a weight is a whole percent: 100 buckets each, so the hash splits the inputs evenly


class Rollout:
    __slots__ = ("name", "stable", "labels", "weights", "stopped")

    def __init__(self, name: str, stable: Task, labels: dict[str, Task | str], weights: dict[str, int]) -> None:
        self.name = name
        self.stable = stable
        self.labels = labels  # label -> its task, or why it cannot be served; "stable" not among them
        self.weights = weights  # label -> percent of the requests that name no version
        self.stopped: dict[str, str] = {}  # label -> why it takes no weighted request any more

    def label(self, label: str) -> Task | str | None:
        return self.stable if label == STABLE else self.labels.get(label)

    def tasks(self) -> list[Task]:
        """Every servable version, the stable one first, each once."""
        found = {self.stable.manifest.version: self.stable}
        for task in self.labels.values():
            if not isinstance(task, str):
                found.setdefault(task.manifest.version, task)
        return list(found.values())

    def choose(self, input_digests: Sequence[str]) -> tuple[str, Task]:
        """(label, task) for a request naming no version whose inputs have these digests."""
        key = sha256(("\0".join((self.name, *input_digests))).encode()).digest()
        bucket = int.from_bytes(key[:8], "big") % BUCKETS
        edge = 0
        for label in sorted(self.weights):
            edge += self.weights[label] * BUCKETS // 100
            if bucket < edge:
                task = self.labels.get(label)
                if task is not None and not isinstance(task, str) and label not in self.stopped:
                    return label, task
                break  # that share goes to stable, never to another label
        return STABLE, self.stable

    def stop(self, label: str, reason: str) -> None:
        self.stopped.setdefault(label, reason)

    def summary(self) -> dict:
        """What GET /models shows of the labels."""
        labels = {STABLE: {"version": self.stable.manifest.version}}
        for label, task in sorted(self.labels.items()):
            shown = {"version": task.manifest.version} if not isinstance(task, str) else {"available": False,
                                                                                       "reason": task}
            if label in self.weights:
                shown["weight"] = self.weights[label]
            if label in self.stopped:
                shown["stopped"] = self.stopped[label]
            labels[label] = shown
        return labels
