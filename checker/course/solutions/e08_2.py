"""08.2 (DIF-4, DIF-12): a sort that also erases the nodes nobody uses is no sort: it breaks
the plug-in contract (a sort reorders, it never erases), so the oracle reports a `contract`
divergence blamed on the plug-in and names the erased nodes: the in-place updates, whose
results nobody reads, looked dead."""

from collections.abc import Mapping, Sequence

import torch.fx

from reference.sort.stable import stable_topological_sort


class DropsDeadNodes:
    """A plug-in with one part, the sort (DIF-1): fxoracle's sort, then dead nodes erased."""

    def stable_sort(
        self, graph: torch.fx.Graph, deps: Mapping[torch.fx.Node, Sequence[torch.fx.Node]]
    ) -> None:
        stable_topological_sort(graph, deps)
        for node in [n for n in graph.nodes if n.op != "output" and not n.users]:
            graph.erase_node(node)


KIND = "contract"
DEAD = {"add_", "add__1", "add__2", "relu_", "relu__1"}
