"""Hand-made `GraphView`s for unit tests of the pure expansion (no torch tracing needed)."""

from __future__ import annotations

from collections.abc import Sequence

from reference.expand.lockstep import GraphView, make_view
from reference.fx_helpers import NodeIndex


def view(spec: Sequence[tuple[str, str, Sequence[str], str | None]]) -> GraphView:
    """Rows `(name, op, arg names, bucket label or None)` in graph order."""
    index = {name: NodeIndex(i) for i, (name, _, _, _) in enumerate(spec)}
    labels: dict[str, list[NodeIndex]] = {}
    for name, _, _, label in spec:
        if label is not None:
            labels.setdefault(label, []).append(index[name])
    return make_view(
        tuple(name for name, _, _, _ in spec),
        tuple(op for _, op, _, _ in spec),
        tuple(tuple(index[a] for a in args) for _, _, args, _ in spec),
        tuple(tuple(members) for members in labels.values()),
    )


def names(v: GraphView, groups: list[tuple[tuple[NodeIndex, ...], ...]]) -> list[list[list[str]]]:
    return [[[v.names[i] for i in region] for region in group] for group in groups]
