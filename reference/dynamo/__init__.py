"""fxoracle inside Dynamo (spec chapters 01 and 03): the one documented hook that installs
fxoracle's tracker (`capture`), and the drop-in pass with torch's contract (`drop_in`).

The public surface: `reference.dynamo.apply_graph_deduplication(output_graph)` and
`reference.dynamo.use_reference()`.
"""

from reference.dynamo.drop_in import (
    ModuleOutputGraph,
    additional_deps,
    apply_graph_deduplication,
    deduplicate_output_graph,
    torch_form,
    torch_format,
    use_reference,
)

__all__ = [
    "ModuleOutputGraph",
    "additional_deps",
    "apply_graph_deduplication",
    "deduplicate_output_graph",
    "torch_form",
    "torch_format",
    "use_reference",
]
