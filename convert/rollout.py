"""The index edits of `python -m convert publish`: a version under a label (with a weight), a label promoted to
stable, the previous stable restored. Each takes the index's entries and returns the new ones; publish.py writes
the result in one PutObject of index.json, so the function sees the whole change at its next refresh or none of it.
"""
from __future__ import annotations

from dataclasses import replace

from function.catalog.published import LABEL, STABLE, PublishedEntry, PublishedModel


class RolloutError(ValueError):
    """The edit cannot be made to this index; nothing was written."""


def check_label(label: str, weight: int | None) -> None:
    if not LABEL.fullmatch(label):
        raise RolloutError(f"{label!r} is not a label: lower-case letters, digits, '-' and '_', a letter first")
    if weight is not None and label == STABLE:
        raise RolloutError("the stable version takes every request no other label's weight takes: "
                           "--weight goes with another label")
    if weight is not None and not 0 <= weight <= 100:
        raise RolloutError(f"--weight is a whole percent from 0 to 100, not {weight}")


def labelled(entries: dict[str, PublishedEntry], model: PublishedModel, label: str,
             weight: int | None) -> dict[str, PublishedEntry]:
    """`model` under `label`: "stable" makes it the version served by default (the old one kept for --rollback),
    another label serves it to requests naming the label and, with a weight, to that percent of the others."""
    check_label(label, weight)
    current = entries.get(model.name)
    if label == STABLE:
        if current is None:
            return {**entries, model.name: PublishedEntry(model)}
        if current.stable.version == model.version:
            return {**entries, model.name: replace(current, stable=model)}
        labels = {name: version for name, version in current.labels.items() if version != model.version}
        weights = {name: share for name, share in current.weights.items() if name in labels}
        return {**entries, model.name: _kept(current, stable=model, labels=labels, weights=weights,
                                             previous_stable=current.stable)}
    if current is None:
        raise RolloutError(f"{model.name} has no stable version yet: publish one first (without --label, or "
                           "with --label stable)")
    if model.version == current.stable.version:
        raise RolloutError(f"version {model.version[:12]} of {model.name} is already its stable version")
    labels = {**current.labels, label: model.version}
    weights = {name: share for name, share in current.weights.items() if name != label}
    if weight:
        weights[label] = weight
    if sum(weights.values()) > 100:
        raise RolloutError(f"the weights of {model.name}'s labels would add up to {sum(weights.values())}%, "
                           "over 100%")
    return {**entries, model.name: _kept(current, labels=labels, weights=weights,
                                         others={**current.others, model.version: model})}


def promoted(entries: dict[str, PublishedEntry], name: str, label: str) -> dict[str, PublishedEntry]:
    """The version under `label` becomes stable, the label and its weight go, the old stable is kept for
    --rollback."""
    current = _entry(entries, name)
    if label not in current.labels:
        raise RolloutError(f"{name} has no label {label!r}; its labels: {', '.join(sorted(current.labels)) or 'none'}")
    return labelled(entries, current.version(current.labels[label]), STABLE, None)


def rolled_back(entries: dict[str, PublishedEntry], name: str) -> dict[str, PublishedEntry]:
    """The previous stable version serves again; the version it replaces keeps no label."""
    current = _entry(entries, name)
    previous = current.previous_stable
    if previous is None:
        raise RolloutError(f"{name} has no previous stable version to roll back to")
    labels = {label: version for label, version in current.labels.items() if version != previous.version}
    weights = {label: share for label, share in current.weights.items() if label in labels}
    return {**entries, name: _kept(current, stable=previous, labels=labels, weights=weights, previous_stable=None)}


def aborted(entries: dict[str, PublishedEntry], name: str, label: str) -> dict[str, PublishedEntry]:
    """The label and its weight go (a canary stopped): every request naming no version gets the stable one again,
    whether or not a previous stable exists; the stable version and the other labels stay as they are."""
    current = _entry(entries, name)
    if label not in current.labels:
        raise RolloutError(f"{name} has no label {label!r}; its labels: {', '.join(sorted(current.labels)) or 'none'}")
    labels = {other: version for other, version in current.labels.items() if other != label}
    weights = {other: share for other, share in current.weights.items() if other != label}
    return {**entries, name: _kept(current, labels=labels, weights=weights)}


def _entry(entries: dict[str, PublishedEntry], name: str) -> PublishedEntry:
    if name not in entries:
        raise RolloutError(f"no model {name!r} is published there; published: {', '.join(sorted(entries)) or 'none'}")
    return entries[name]


def _kept(current: PublishedEntry, **changes) -> PublishedEntry:
    """`current` with `changes`, keeping in `others` exactly the versions a label or previous_stable names."""
    entry = replace(current, **changes)
    known = {**entry.others, current.stable.version: current.stable}
    if current.previous_stable is not None:
        known[current.previous_stable.version] = current.previous_stable
    wanted = set(entry.labels.values()) | ({entry.previous_stable.version} if entry.previous_stable else set())
    return replace(entry, others={version: known[version] for version in wanted - {entry.stable.version}})
