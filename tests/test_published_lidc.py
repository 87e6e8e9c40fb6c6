"""The published LIDC-IDRI page holds up against its own numbers: every verdict recomputed from
the per-pair scores published beside it, with the rule the page states (study.analysis.verdicts),
is the page's; identical scores never carry opposite verdicts without a printed reason; no
verdict rests on pairs the reference leaves undefined; torchmetrics' 3D HD reads "not measured"."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from study.analysis import verdict_text, verdicts
from study.analysis.read import read_verdicts

PAGE = Path(__file__).resolve().parents[1] / "docs/results/lidc.md"
FILES = PAGE.with_suffix("")
COMPARED = ["metric", "spacing", "stratum", "tool", "identical", "verdict", "rank", "n"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def published() -> pd.DataFrame:
    return read_verdicts(FILES / "recommendations.csv")


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    rows = pd.read_parquet(FILES / "scores.parquet")
    for column in rows.select_dtypes("category"):
        rows[column] = rows[column].astype(str)
    return rows.assign(dataset="lidc", environment="study", seconds=np.nan)


def test_every_verdict_recomputed_from_the_published_scores_is_the_pages(published, scores):
    again = verdicts.verdict_table(
        scores,
        grid_checked=pd.read_parquet(FILES / "grid_check.parquet"),
        manifest=pd.read_csv(FILES / "pairs.csv"),
    )
    keys = ["metric", "spacing", "stratum", "tool"]
    mine = again[COMPARED].astype(str).sort_values(keys).reset_index(drop=True)
    theirs = published[COMPARED].astype(str).sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, theirs)


def test_the_page_opens_with_the_published_verdicts(published):
    text = PAGE.read_text(encoding="utf-8")
    first = [line for line in text.splitlines() if line.startswith("## ")][0]
    assert first == "## Which tool to use, per metric and grid"
    answer = verdict_text.answer_table(published)
    uses = answer[next(c for c in answer.columns if c.startswith("Use"))]
    for cell in uses:  # each "Use" cell, as computed from the published table
        assert cell in text


def test_identical_scores_never_carry_opposite_verdicts_silently(published, scores):
    """Tools whose published per-pair scores on a grid are identical get one verdict there,
    or each row of a differing verdict prints the reason that parts them."""
    overall = verdict_text.of_stratum(published)
    verdict_of, reason_of = {}, {}
    for row in overall.itertuples():
        for tool in [row.tool, *verdict_text.twins_of(row)]:
            verdict_of[row.metric, row.spacing, tool] = row.verdict
            reason_of[row.metric, row.spacing, tool] = row.reason
    tools = scores.loc[scores["tool"].isin({t for _, _, t in verdict_of})]
    for (metric, spacing), rows in tools.groupby(["metric", "spacing"]):
        table = rows.pivot_table(
            index=["case", "oar"], columns="tool", values="value", aggfunc="first", dropna=False
        )
        groups: dict[tuple, list[str]] = {}
        for tool in table.columns:
            groups.setdefault(tuple(table[tool].astype(float).map(repr)), []).append(tool)
        for members in groups.values():
            found = {verdict_of.get((metric, spacing, t)) for t in members} - {None}
            if len(found) > 1:
                for tool in members:
                    reason = reason_of[metric, spacing, tool]
                    assert "identical scores to" in reason, (metric, spacing, tool, reason)


def test_no_verdict_counts_the_pairs_the_reference_leaves_undefined(published, scores):
    reference = scores.loc[scores["tool"] == "reference"]
    undefined = reference.loc[~np.isfinite(reference["value"].astype(float))]
    for (metric, spacing), rows in undefined.groupby(["metric", "spacing"]):
        mine = published.loc[
            (published["metric"] == metric)
            & (published["spacing"] == spacing)
            & (published["stratum"] == verdicts.ALL)
        ]
        assert (mine["n_undefined"] == len(rows)).all(), (metric, spacing)


def test_torchmetrics_3d_hd_is_not_measured(published):
    rows = verdict_text.of_stratum(published)
    hd = rows.loc[(rows["metric"] == "HD") & (rows["tool"] == "torchmetrics")]
    assert not hd.empty and set(hd["verdict"]) == {"not measured"}
