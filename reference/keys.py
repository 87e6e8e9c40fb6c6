"""The metric keys: the vocabulary every part of the project shares (tools, tables, figures).

Kept in a module of its own, with no imports, so that code which only needs the names (the
adapters' harness, the study's record schema) does not load VTK and the BVH library.
"""

METRIC_KEYS: tuple[str, ...] = ("HD", "HD95", "MASD", "ASSD", "NSD", "BIoU", "DSC")
"""Every metric, in the paper's order. "HD95" stands for HDp at the chosen percentile."""

DISTANCE_KEYS: tuple[str, ...] = ("HD", "HD95", "MASD", "ASSD", "NSD")
"""The metrics of the distance pass between the two boundaries (BIoU and DSC are volumes)."""
