"""The HD timing's medians and the sentences the findings and the cards print of them, on a
timing table whose medians are known by construction."""

from __future__ import annotations

import pandas as pd

from study.analysis.phrases import edge_row, milliseconds, timing_of
from study.analysis.timing import median_times, time_per_case, timed_grids


def timing_table() -> pd.DataFrame:
    """Three repeats per (tool, pair): deepmind 10, 20, 30 ms (median 20 ms) on each of two
    pairs, the reference 1, 2 and 3 ms, and one failed repeat of deepmind that must not count."""
    rows = []
    for tool, base in (("deepmind", 0.010), ("reference", 0.001)):
        for oar in ("Parotid_L", "Cochlea_L"):
            for repeat in range(3):
                rows.append(
                    {
                        "dataset": "test",
                        "case": "case_01",
                        "oar": oar,
                        "category": "small",
                        "tool": tool,
                        "grid": "scan",
                        "shape": "301x301x281",
                        "seconds": base * (repeat + 1),
                        "status": "ok",
                    }
                )
    failed = {**rows[0], "seconds": 99.0, "status": "error"}
    return pd.DataFrame([*rows, failed])


def test_medians_leave_failed_runs_out():
    per_case = time_per_case(timing_table())
    assert len(per_case) == 4
    medians = median_times(per_case)
    assert list(medians.index) == ["reference", "deepmind"]  # fastest first
    assert medians["deepmind"] == 0.020 and medians["reference"] == 0.002


def test_the_sentences_name_the_times():
    medians = median_times(time_per_case(timing_table()))
    assert milliseconds(0.0123) == "12.3 ms"
    said = timing_of(medians, "deepmind")
    assert said.startswith("median 20 ms per case (the reference 2 ms); 1 of 1 timed tools")
    assert "the paper's tools from 20 ms (Google DeepMind)" in said
    assert timing_of(medians, "monai") == "not timed (or every timing run failed)"
    assert timed_grids(timing_table()) == "scan-sized grids of 301 × 301 × 281 voxels"
    assert edge_row(None, "deepmind") == "no edge-case record"
