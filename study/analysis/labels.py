"""Names, order and number formats of the analysis: how every table, figure and page names a
tool, orders tools and voxel sizes, groups tools (the paper's, later ones, cross-checks, the
reference) and prints a Δ, a number or a message. Computes nothing from the scores."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

# The adapter registry names, groups and orders the tools (its import costs about 65 ms once
# pandas is loaded, so it sits here rather than inside the functions that read it).
from adapters import REGISTRY
from study.records import REFERENCE_LABELS
from vocabulary import BY_KEY


def tool_label(tool: str) -> str:
    """Display label of a tool key: the adapter's label, a reference label, or the key itself."""
    if tool in REFERENCE_LABELS:
        return REFERENCE_LABELS[tool]
    adapter = REGISTRY.get(tool)
    return adapter.label if adapter is not None else tool


TOOL_GROUPS: dict[str, str] = {
    "paper": "In the paper",
    "later": "Since the paper",
    "cross-check": "Cross-check",
    "other": "Other",
    "reference": "Reference",
}
"""Groups of implementations, in the order tables and figures show them, with their titles.

paper: the eleven tools of the paper; later: the tools the study added since
(`Adapter.in_paper` False); cross-check: scored like a tool, reported as a check of the
reference (MeshMetrics); other: a tool the registry does not know (no adapter: a scores table
from elsewhere); reference: the reference and its meshing variants."""


def tool_group(tool: str) -> str:
    """Group key (`TOOL_GROUPS`) of a tool key, read off the adapter registry."""
    if tool in REFERENCE_LABELS:
        return "reference"
    adapter = REGISTRY.get(tool)
    if adapter is None:
        return "other"
    if adapter.role == "cross-check":
        return "cross-check"
    return "paper" if adapter.in_paper else "later"


def group_title(tool: str) -> str:
    """Display title of a tool's group: "In the paper", "Since the paper", ..."""
    return TOOL_GROUPS[tool_group(tool)]


def of_the_paper(tool: str) -> bool:
    """True for the paper's eleven tools and the reference: what its claims are checked on."""
    return tool_group(tool) in ("paper", "reference")


def paper_rows(frame: pd.DataFrame | None, *columns: str) -> pd.DataFrame | None:
    """The rows of `frame` whose every tool column (`columns`) names one of the paper's tools
    or the reference (`of_the_paper`)."""
    if frame is None or frame.empty:
        return frame
    keep = pd.Series(True, index=frame.index)
    for column in columns:
        keep &= frame[column].map(of_the_paper).astype(bool)
    return frame.loc[keep]


def ordered_tools(tools: Iterable[str]) -> list[str]:
    """Tools in the one order used by every table and figure.

    By group (`TOOL_GROUPS`): the paper's tools, the tools since the paper and the cross-checks
    each in the registry's order, then tools the registry does not know alphabetically, then
    the reference and its variants.
    """
    unique = list(dict.fromkeys(tools))
    group_rank = {group: i for i, group in enumerate(TOOL_GROUPS)}
    registry_rank = {tool: i for i, tool in enumerate(REGISTRY)}
    reference_rank = {name: i for i, name in enumerate(REFERENCE_LABELS)}

    def sort_key(tool: str) -> tuple[int, int, str]:
        within = reference_rank.get(tool, registry_rank.get(tool, len(registry_rank)))
        return (group_rank[tool_group(tool)], within, tool)

    return sorted(unique, key=sort_key)


def group_spans(tools: Sequence[str]) -> list[tuple[str, int, int]]:
    """(group, first, stop) of each run of one group in an ordered tool list (`ordered_tools`),
    so a table or figure can draw a divider at `first` of every group but the first."""
    spans: list[tuple[str, int, int]] = []
    for i, tool in enumerate(tools):
        group = tool_group(tool)
        if spans and spans[-1][0] == group:
            spans[-1] = (group, spans[-1][1], i + 1)
        else:
            spans.append((group, i, i + 1))
    return spans


def shows_groups(tools: Iterable[str]) -> bool:
    """Whether a table or figure of these tools marks their groups: when the tools compared
    with the reference (the reference itself aside) come from more than one group. A study of
    the paper's tools alone looks like the paper's."""
    return len({tool_group(t) for t in tools} - {"reference"}) > 1


def ordered_spacings(spacings: Iterable[str], configured: Sequence[str] | None = None) -> list:
    """Voxel-size labels in configuration order when known, else in order of appearance."""
    unique = list(dict.fromkeys(spacings))
    if not configured:
        return unique
    rank = {label: i for i, label in enumerate(configured)}
    return sorted(unique, key=lambda s: (rank.get(s, len(rank)), s))


def display_scale(metric: str) -> float:
    """Factor from a metric's unit to its display unit: 100 (percentage points) for relative
    metrics, 1 (mm) for distance metrics."""
    return BY_KEY[metric].delta_scale


def display_unit(metric: str) -> str:
    """Unit of Δ in tables and figures: "%pt" for relative metrics, "mm" otherwise."""
    return BY_KEY[metric].delta_unit


def tool_versions(frame: pd.DataFrame) -> str:
    """ "Google DeepMind 0.1; MONAI 1.6.1" from the tool and tool_version columns of `frame`,
    in tool order; several versions of one tool are joined by "/"."""
    versions = frame.groupby("tool")["tool_version"].agg(
        lambda v: "/".join(sorted(set(map(str, v))))
    )
    return "; ".join(f"{tool_label(t)} {versions[t]}" for t in ordered_tools(versions.index))


def tool_list(tools: Iterable[str]) -> str:
    """ "Google DeepMind, MONAI": the tools' labels in tool order ("none" for no tool)."""
    return ", ".join(tool_label(t) for t in ordered_tools(tools)) or "none"


def signed(value: float) -> str:
    """A Δ as the findings print it: "+0.12" ("+0.00", never "-0.00", for a value that rounds
    to zero), or "n/a" when not finite."""
    return f"{round(value, 2) + 0.0:+.2f}" if np.isfinite(value) else "n/a"


def format_number(value: float) -> str:
    """About three significant digits, as in the paper: 0.09, 4.25, 34.8, 115; "–" if NaN."""
    if value is None or not np.isfinite(value):
        return "–" if value is None or np.isnan(value) else ("∞" if value > 0 else "−∞")
    magnitude = abs(value)
    text = (
        f"{value:.0f}"
        if magnitude >= 100
        else f"{value:.1f}"
        if magnitude >= 10
        else f"{value:.2f}"
    )
    return text.replace("-", "−")


def shorten(message: str, limit: int = 90) -> str:
    """The first clause of a long message, so a table note stays readable."""
    first = message.split(" (")[0]
    return first if len(first) <= limit else first[: limit - 1] + "…"


class MaskPairWords(NamedTuple):
    """How the pages and Fig. A3 speak of a dataset's mask pairs (the manifest's `oar`
    column): an OAR of the synthetic study is an organ, a pair of LIDC-IDRI is two readers'
    outlines of a nodule."""

    singular: str
    plural: str
    volume: str  # Fig. A3's y axis
    outliner: str  # who drew each of a pair's two masks
    cases: str  # what a case is, plural


MASK_PAIR_WORDS = {
    "synthetic": MaskPairWords("OAR", "OARs", "OAR volume (mm³)", "observer", "cases"),
    "lidc": MaskPairWords("reader pair", "reader pairs", "Nodule volume (mm³)", "reader", "scans"),
}
"""The words of each dataset source (`dataset.source`); any other (a user's manifest, or a
source not known) gets `NEUTRAL_WORDS`."""

NEUTRAL_WORDS = MaskPairWords("mask pair", "mask pairs", "Mask volume (mm³)", "observer", "cases")


def mask_pair_words(source: str) -> MaskPairWords:
    """The words for the mask pairs of a dataset source (`MASK_PAIR_WORDS`)."""
    return MASK_PAIR_WORDS.get(source, NEUTRAL_WORDS)
