"""The verdict table: per metric, grid and stratum, which tools to use, which are the closest
where none passes, which to avoid, and which could not be measured, each with the reason that
decided it. Computed once from the scores (`verdict_table`); the recommendations, the cards,
the report's verdicts at a glance, the findings and the published page all render this table.

The rule (`rule_text` states it in words, from these constants):

- Judged on the pairs the reference defines (a finite reference value). Where the reference is
  not finite (an empty mask: inf or NaN), Δ says nothing about accuracy: each tool's answer
  there is its handling of empty masks, a caution beside the verdict, never a failed Δ.
- The tolerance of a metric on a grid is the smaller of the absolute `advice.TOLERANCE`
  (±0.5 mm, ±2 %pt) and `READERS_SHARE` of the readers' own median disagreement on that grid
  (the reference's median value; 100 − median NSD in %pt), never below `FLOOR`: a tool's error
  must be small next to the disagreement the study measures, not merely below half a
  millimetre.
- use: at least `advice.MOST_PAIRS` of the defined pairs within the tolerance, no failure
  on them, and not measured to ignore the voxel size or to depend on the field of view.
- not measured: the tool failed on every defined pair (it cannot compute the metric for these
  masks); it takes no part in any comparison.
- no verdict: fewer than `MIN_PAIRS` defined pairs.
- avoid: every other tool, with each measured reason.
- closest: where no tool is to be used, the `CLOSEST` tools whose published value a reader can
  correct best: the narrowest `advice.INTERVAL` of Δ first, a tool with a failure, a
  non-finite Δ or a measured dependence after every tool without one.
- Tools with identical per-pair scores on a grid share a row when their verdicts agree; when
  not, each row names the reason that tells them apart.

Strata: the verdicts per stratum (the pairs' size category; on the native grid also the slice
thickness) use their grid's tolerance and measured reasons, on the stratum's own pairs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from study.analysis import advice
from study.analysis.delta import measured as measured_rows
from study.analysis.labels import display_scale, display_unit, ordered_tools, signed, tool_label
from study.oars import KNOWN_CATEGORIES, category_phrase
from study.records import NATIVE, REFERENCE, VERDICT_COLUMNS, spacing_title
from vocabulary import BY_KEY, TESTED_KEYS

READERS_SHARE = 0.25
"""The tolerance is at most this share of the readers' median disagreement on the grid: a
tool whose error is a quarter of what it measures changes a reported disagreement by at most a
quarter."""

FLOOR: dict[str, float] = {"mm": 0.01, "%pt": 0.1}
"""The tolerance never falls below this (display units): where readers all but agree (NSD
near 100 %), a tolerance of zero would ask for bit-equal arithmetic."""

MIN_PAIRS = 3
"""Fewest pairs the reference defines for a verdict on a grid or stratum."""

CLOSEST = 2
"""Where no tool passes, this many tools are named the closest."""

FAR = 2.0
"""A "use" whose worst |Δ| exceeds this many tolerances says how far, and on which pair."""

ALL = "all pairs"
"""The stratum of every pair of a grid."""

VERDICTS: tuple[str, ...] = ("use", "closest", "avoid", "not measured", "no verdict")
"""Verdicts in the order the rows are listed."""

# --------------------------------------------------------------------------------------------
# Strata and the readers' scale
# --------------------------------------------------------------------------------------------


def slice_thickness(manifest: pd.DataFrame | None) -> dict[tuple[str, str], str]:
    """(case, oar) -> "slices 2.5 mm", the native grid's slice spacing of each pair of a
    manifest with a `spacing_mm` column ("0.7x0.7x2.5"); empty without one, and for 2D pairs
    ("0.7x0.7": a slice has no slice spacing)."""
    if manifest is None or "spacing_mm" not in manifest:
        return {}
    sides = manifest["spacing_mm"].astype(str).str.split("x")
    volumes = sides.str.len() == 3
    slices = sides[volumes].str[-1].astype(float)
    return {
        (case, oar): f"slices {s:g} mm"
        for case, oar, s in zip(
            manifest.loc[volumes, "case"], manifest.loc[volumes, "oar"], slices, strict=True
        )
    }


def with_strata(rows: pd.DataFrame, slices: Mapping[tuple[str, str], str]) -> pd.DataFrame:
    """Every row once per stratum it belongs to: `ALL`, its size category and, on the native
    grid, its slice thickness (`slice_thickness`)."""
    parts = [rows.assign(stratum=ALL), rows.assign(stratum=rows["category"].map(category_phrase))]
    native = rows.loc[rows["spacing"] == NATIVE]
    if slices and not native.empty:
        keys = zip(native["case"], native["oar"], strict=True)
        thickness = pd.Series([slices.get(k, "") for k in keys], index=native.index)
        parts.append(native.assign(stratum=thickness).loc[thickness != ""])
    return pd.concat(parts, ignore_index=True)


def stratum_order(strata: Sequence[str]) -> list[str]:
    """`ALL` first, then the size categories in their order, then slice thicknesses, thinnest
    first."""
    strata = list(dict.fromkeys(strata))
    phrases = [category_phrase(c) for c in KNOWN_CATEGORIES]
    categories = {s for s in strata if s != ALL and not s.startswith("slices ")}
    named = [p for p in phrases if p in categories] + sorted(categories - set(phrases))
    thick = sorted((s for s in strata if s.startswith("slices ")), key=_thickness)
    return [ALL] * (ALL in strata) + named + thick


def _thickness(stratum: str) -> float:
    """2.5 from "slices 2.5 mm"."""
    return float(stratum.split()[1])


def readers_scale(scores: pd.DataFrame, slices: Mapping) -> pd.DataFrame:
    """Per metric, grid (spacing) and stratum, the reference's finite values between the two
    readers (observers) of each pair: median, q1, q3, in display units (mm; % for NSD and
    BIoU), and `disagreement`, the median distance in mm or 100 − median in %pt."""
    rows = measured_rows(scores)
    rows = rows.loc[(rows["tool"] == REFERENCE) & rows["metric"].isin(TESTED_KEYS)]
    values = rows["value"].astype(float)
    rows = rows.loc[np.isfinite(values)].assign(shown=values * rows["metric"].map(display_scale))
    rows = with_strata(rows, slices)
    grouped = rows.groupby(["metric", "spacing", "stratum"])["shown"]
    scale = pd.DataFrame(
        {
            "readers_median": grouped.median(),
            "readers_q1": grouped.quantile(0.25),
            "readers_q3": grouped.quantile(0.75),
        }
    ).reset_index()
    higher = scale["metric"].map(lambda m: BY_KEY[m].better == "higher")
    scale["disagreement"] = np.where(
        higher, 100.0 - scale["readers_median"], scale["readers_median"]
    )
    return scale


def tolerances(grids: pd.DataFrame, scale: pd.DataFrame) -> pd.DataFrame:
    """Per metric and grid of `grids`: `tolerance` and its `tolerance_basis`, the smaller of
    the absolute tolerance and `READERS_SHARE` of the readers' disagreement (the `ALL`
    stratum of `readers_scale`), never below `FLOOR`; the absolute one where the reference
    defines no pair of the grid."""
    readers = scale.loc[scale["stratum"] == ALL, ["metric", "spacing", "disagreement"]]
    grid = (
        grids[["metric", "spacing"]]
        .drop_duplicates()
        .merge(readers, on=["metric", "spacing"], how="left")
    )
    unit = grid["metric"].map(display_unit)
    absolute = unit.map(advice.TOLERANCE)
    relative = np.maximum(READERS_SHARE * grid["disagreement"], unit.map(FLOOR)).fillna(np.inf)
    grid["tolerance"] = np.minimum(absolute, relative)
    grid["tolerance_basis"] = np.where(relative < absolute, "readers", "absolute")
    return grid.drop(columns="disagreement")


# --------------------------------------------------------------------------------------------
# The pairs the reference leaves undefined
# --------------------------------------------------------------------------------------------


def answer_kind(value: float, status: str, reference: float) -> str:
    """One tool's answer on a pair the reference leaves undefined (reference inf or NaN)."""
    if status in ("error", "unavailable"):
        return "raises an error"
    if not np.isfinite(value):
        same = (np.isnan(value) and np.isnan(reference)) or value == reference
        word = "NaN" if np.isnan(value) else ("inf" if value > 0 else "-inf")
        return f"gives {word}" + (", as the reference" if same else "")
    return "gives a number"


def undefined_answers(rows: pd.DataFrame) -> str:
    """How one tool answered on the pairs the reference leaves undefined, as a caution ("" if
    there are none)."""
    if rows.empty:
        return ""
    kinds = [
        answer_kind(float(v), str(s), float(r))
        for v, s, r in zip(rows["value"], rows["status"], rows["value_reference"], strict=True)
    ]
    counts = pd.Series(kinds).value_counts()
    told = ", ".join(
        kind if count == len(kinds) else f"{kind} on {count}" for kind, count in counts.items()
    )
    numbers = rows.loc[[k == "gives a number" for k in kinds], "value"].astype(float)
    if not numbers.empty:
        told += f" (e.g. {numbers.iloc[0]:.4g})"
    return (
        f"on the {len(kinds)} pairs the reference leaves undefined (an empty mask on this "
        f"grid): {told}"
    )


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


def worst_case(row: Mapping) -> str:
    """A "use" row's share within, the pairs outside the tolerance, and its worst Δ: where
    that is more than `FAR` tolerances, how far and on which kind of pair."""
    unit, tolerance = row["unit"], row["tolerance"]
    text = f"{share(row['within'])} of {row['n']} pairs within ±{tolerance:.2g} {unit}"
    if row["n_outside"]:
        text += f", {row['n_outside']} outside"
    text += f"; worst {signed(row['worst'])} {unit}"
    if np.isfinite(row["worst"]) and abs(row["worst"]) > FAR * tolerance:
        text += (
            f", {abs(row['worst']) / tolerance:.0f} × the tolerance, on a pair of "
            f"{category_phrase(row['worst_category'])}"
        )
    return text


def voxel_here(reason: str, spacing: str) -> str:
    """A measured voxel-size reason, worded for the grid it is given on: on a 1 mm grid such a
    tool is right only by coincidence."""
    side = advice.isotropic_side(spacing)
    if side == 1.0:
        return (
            "ignores the voxel size: right on this grid only because its voxels are 1 mm, "
            f"wrong on any other {reason.removeprefix('ignores the voxel size ')}"
        )
    return reason


def share(within: float) -> str:
    """A share of pairs: "100%" only when every pair is within, else never rounded up to it
    ("99.6%")."""
    if within == 1.0 or within < 0.995:
        return f"{within:.0%}"
    return f"{within:.1%}"


def decide(row: Mapping, reasons: list[str]) -> tuple[str, list[str]]:
    """(verdict, the reasons printed beside it) of one tool on one grid and stratum, before
    the closest are chosen."""
    if row["n"] < MIN_PAIRS:
        return "no verdict", [
            f"{row['n']} pairs the reference defines; a verdict needs at least {MIN_PAIRS}"
        ]
    if row["n_failed"] == row["n"]:
        return "not measured", [f"fails on every pair: {row['message']}"]
    if reasons:
        return "avoid", reasons
    return "use", [worst_case(row)]


def verdict_reasons(row: Mapping, measured: Mapping[str, Mapping]) -> list[str]:
    """Every measured reason to avoid one tool for one metric, grid and stratum."""
    key = (row["tool"], row["metric"])
    reasons = []
    if row["within"] < advice.MOST_PAIRS:
        reasons.append(advice.bias_reason(row))
    if row["n_failed"]:
        reasons.append(f"fails on {row['n_failed']} of {row['n']} pairs ({row['message']})")
    if row["n_nonfinite"]:
        reasons.append(f"{row['n_nonfinite']} of {row['n']} Δ not finite")
    if key in measured["spacing"]:
        found = advice.voxel_size_reason(
            measured["spacing"][key], row["metric"], row["spacing"], row["ratio"]
        )
        reasons.append(voxel_here(found, row["spacing"]))
    if key in measured["field of view"]:
        reasons.append(measured["field of view"][key])
    return reasons


def verdict_table(
    scores: pd.DataFrame,
    grid_checked: pd.DataFrame | None = None,
    edge_cases: pd.DataFrame | None = None,
    tools: Sequence[str] | None = None,
    manifest: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The verdict of every scored tool per metric of `vocabulary.TESTED_KEYS`, grid (never
    pooled) and stratum, by the module's rule; columns `VERDICT_COLUMNS`, rows in `rank`
    order. `manifest` (the dataset's pairs, with `spacing_mm`) adds the native grid's slice
    thickness strata."""
    delta = advice.pair_deltas(scores, tools)
    delta = delta.loc[delta["metric"].isin(TESTED_KEYS)]
    if delta.empty:
        return pd.DataFrame(columns=list(VERDICT_COLUMNS))
    slices = slice_thickness(manifest)
    scale = readers_scale(scores, slices)
    limits = tolerances(delta, scale)
    delta = delta.merge(limits, on=["metric", "spacing"], how="left")
    delta["within"] = _within(delta)
    defined = delta.loc[delta["defined"]]
    field_of_view, field_of_view_cautions = advice.field_of_view_findings(grid_checked)
    measured = {"spacing": advice.ignores_voxel_size(defined), "field of view": field_of_view}
    context = {
        "empty": advice.empty_mask_errors(edge_cases),
        "field of view": field_of_view_cautions,
        "messages": advice.all_error_messages(scores),
        "twins": advice.identical_tools(delta),
        "seconds": advice.reference_seconds(scores),
        "measured": measured,
    }
    stratified = with_strata(delta, slices)
    keys = ["metric", "spacing", "stratum", "tool"]
    summary = advice.agreement(stratified.loc[stratified["defined"]], keys)
    if summary.empty:  # the reference defines no pair: every row says so
        summary = pd.DataFrame(columns=keys)
    undefined = stratified.loc[~stratified["defined"]]
    answers = {key: undefined_answers(rows) for key, rows in undefined.groupby(keys)}
    counts = undefined.groupby(keys).size().to_dict()
    every = stratified[keys].drop_duplicates()
    summary = every.merge(summary, on=keys, how="left")
    summary = summary.merge(limits, on=["metric", "spacing"], how="left").merge(
        scale.drop(columns="disagreement"), on=["metric", "spacing", "stratum"], how="left"
    )
    rows = []
    for row in summary.to_dict("records"):
        key = tuple(row[k] for k in keys)
        row["n_undefined"] = int(counts.get(key, 0))
        row["undefined_text"] = answers.get(key, "")
        rows += tool_rows(_filled(row), context)
    table = pd.DataFrame(rows)
    return rank(table)[list(VERDICT_COLUMNS)]


def _within(delta: pd.DataFrame) -> pd.Series:
    """Defined and finite Δ within the row's tolerance."""
    return (
        delta["defined"]
        & (delta["kind"] == "finite")
        & (delta["scaled"].abs() <= delta["tolerance"] + 1e-12)
    )


def _filled(row: dict) -> dict:
    """A summary row of a tool with no defined pair on its stratum: zero counts."""
    for column in ("n", "n_failed", "n_nonfinite", "n_finite", "n_above", "n_below"):
        value = row.get(column)
        row[column] = 0 if value is None or not np.isfinite(value) else int(value)
    for column in ("median", "sd", "worst", "lo", "hi", "ratio", "within"):
        value = row.get(column)
        row[column] = np.nan if value is None else float(value)
    row["within"] = 0.0 if not np.isfinite(row["within"]) else row["within"]
    row["n_outside"] = row["n"] - int(round(row["within"] * row["n"]))
    row["unit"] = display_unit(row["metric"])
    if not isinstance(row.get("worst_category"), str):
        row["worst_category"] = ""
    return row


def tool_rows(row: dict, context: Mapping) -> list[dict]:
    """The verdict row(s) of one tool on one metric, grid and stratum: none when an identical
    twin earlier in tool order speaks for it; one per distinct verdict among the twins."""
    metric, spacing, tool = row["metric"], row["spacing"], row["tool"]
    members = context["twins"].get((metric, spacing, tool), [tool])
    if members[0] != tool:
        return []
    decided, cautions = {}, {}
    for member in members:
        message = context["messages"].get(member, {}).get(metric, "")
        mine = {**row, "tool": member, "message": message}
        decided[member] = decide(mine, verdict_reasons(mine, context["measured"]))
        key = (member, metric)
        found = (
            context["empty"].get(key),
            context["field of view"].get(key),
            advice.declared_spacing_ignored(*key),
        )
        cautions[member] = [row["undefined_text"], *(text for text in found if text)]
    measured = context["measured"]
    rows = []
    for verdict in dict.fromkeys(v for v, _ in decided.values()):
        alike = [m for m in members if decided[m][0] == verdict]
        others = [m for m in members if m not in alike]
        reason = advice.joined({m: decided[m][1] for m in alike})
        if others:
            reason += f" (identical scores to {', '.join(map(tool_label, others))} on this grid)"
        seconds = context["seconds"]
        rows.append(
            {
                **row,
                "tool": alike[0],
                "grid": spacing_title(spacing),
                "identical": ", ".join(alike[1:]),
                "verdict": verdict,
                "reason": reason,
                "reasons": reason if verdict == "avoid" else "",
                # Measured to ignore the voxel size or depend on the field of view (`rank`).
                "dependent": any(
                    (m, metric) in found for m in alike for found in measured.values()
                ),
                "cautions": advice.joined({m: [c for c in cautions[m] if c] for m in alike}),
                "reference_seconds": seconds["median"].get(spacing, np.nan),
                "reference_max_seconds": seconds["max"].get(spacing, np.nan),
            }
        )
    return rows


def hard_reason(table: pd.DataFrame) -> pd.Series:
    """Rows whose tool failed, gave a non-finite Δ or is measured to depend on the voxel size
    or the field of view: its interval does not hold for every pair or grid."""
    return (table["n_failed"] > 0) | (table["n_nonfinite"] > 0) | table["dependent"]


def rank(table: pd.DataFrame) -> pd.DataFrame:
    """Order per metric, grid (`advice.grid_order`) and stratum: the tools to use by
    |worst Δ|, numbered from 1; where there is none, the `CLOSEST` candidates by narrowest
    interval (a hard reason last, then most pairs within), marked "closest" and numbered from
    1; then avoid, not measured and no verdict in tool order (rank 0)."""
    metric_rank = {m: i for i, m in enumerate(TESTED_KEYS)}
    grid_rank = {s: i for i, s in enumerate(sorted(set(table["spacing"]), key=advice.grid_order))}
    strata = {s: i for i, s in enumerate(stratum_order(table["stratum"]))}
    tool_rank = {t: i for i, t in enumerate(ordered_tools(table["tool"]))}
    used = table["verdict"] == "use"
    avoided = table["verdict"] == "avoid"
    table = table.assign(
        _m=table["metric"].map(metric_rank),
        _g=table["spacing"].map(grid_rank),
        _s=table["stratum"].map(strata),
        _v=table["verdict"].map(VERDICTS.index),
        _hard=np.where(used, False, hard_reason(table)),
        # Widths equal to a millionth of a unit are equal (floating-point noise of Δ).
        _width=np.where(used, 0.0, (table["hi"] - table["lo"]).round(6).fillna(np.inf)),
        _within=-table["within"],
        _worst=table["worst"].abs().fillna(np.inf),
        _t=table["tool"].map(tool_rank),
    )
    order = ["_m", "_g", "_s", "_v", "_hard", "_width", "_within", "_worst", "_t"]
    table = table.sort_values(["_m", "_g", "_s", "_v", "_worst", "_t"])
    groups = table.groupby(["metric", "spacing", "stratum"], sort=False)
    none_used = ~groups["verdict"].transform(lambda v: (v == "use").any())
    candidates = table.loc[none_used & avoided].sort_values(order)
    chosen = candidates.groupby(["metric", "spacing", "stratum"], sort=False).head(CLOSEST)
    table.loc[chosen.index, "verdict"] = "closest"
    table.loc[chosen.index, "reason"] = [closest_reason(r) for r in chosen.to_dict("records")]
    table["_v"] = table["verdict"].map(VERDICTS.index)
    table = table.sort_values(order)
    ranked = table["verdict"].isin(["use", "closest"])
    number = table.loc[ranked].groupby(["metric", "spacing", "stratum"], sort=False).cumcount() + 1
    table["rank"] = 0
    table.loc[ranked, "rank"] = number
    return table.drop(columns=[c for c in table.columns if c.startswith("_")])


def closest_reason(row: Mapping) -> str:
    """Why a tool is named the closest: its interval, share within, and what it misses."""
    return (
        f"narrowest interval: {advice.interval_text(row)}; {share(row['within'])} within "
        f"±{row['tolerance']:.2g} {row['unit']}; misses: {row['reasons']}"
    )
