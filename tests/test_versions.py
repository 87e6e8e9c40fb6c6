"""The records of one tool in one environment come from one version, or collecting stops
(`study.scoring.versions`)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from study.records import SCORE_COLUMNS, TIMING_COLUMNS
from study.scoring.score import unavailable_rows
from study.scoring.versions import MixedVersions, check_one_version, versions_in


def rows(path, columns, tool, version, environment="study"):
    row = {c: "" for c in columns} | {
        "tool": tool,
        "tool_version": version,
        "environment": environment,
        "status": "ok",
    }
    pd.DataFrame([row], columns=list(columns)).astype({"tool_version": str}).to_parquet(path)
    return path


def probe(path, tool, version, environment="study"):
    status = "ok" if version else "unavailable"
    record = {"tool": tool, "environment": environment, "version": version, "status": status}
    path.write_text(json.dumps({**record, "records": []}))
    return path


def test_one_version_per_tool_and_environment_passes(tmp_path):
    files = [
        rows(tmp_path / "a.parquet", SCORE_COLUMNS, "monai", "1.5"),
        rows(tmp_path / "b.parquet", SCORE_COLUMNS, "monai", "1.3", environment="paper"),
        rows(tmp_path / "t.parquet", TIMING_COLUMNS, "monai", "1.5"),
        probe(tmp_path / "e.json", "monai", "1.5"),
        probe(tmp_path / "p.json", "monai", "1.3", environment="paper"),
    ]
    check_one_version(files)


def test_a_stale_record_is_named_with_its_version_and_file(tmp_path):
    scores = rows(tmp_path / "case_01.parquet", SCORE_COLUMNS, "monai", "1.5")
    timing = rows(tmp_path / "timing.parquet", TIMING_COLUMNS, "monai", "1.4")
    edge = probe(tmp_path / "monai.json", "monai", "1.5")
    other = probe(tmp_path / "medpy.json", "medpy", "0.5")
    with pytest.raises(MixedVersions) as stopped:
        check_one_version([scores, timing, edge, other])
    said = str(stopped.value)
    assert "monai (environment study) in 2 versions" in said
    assert f"1.5 in {scores}, {edge}; 1.4 in {timing}" in said
    assert "medpy" not in said


def test_unavailable_beside_installed_is_a_mix(tmp_path):
    """The stale edge-case record of a tool installed since: "not installed" in Table A3
    beside its scores."""
    scores = rows(tmp_path / "case_01.parquet", SCORE_COLUMNS, "anima", "4.2")
    edge = probe(tmp_path / "anima.json", "anima", None)
    assert versions_in(edge) == {("anima", "study", "unavailable")}
    with pytest.raises(MixedVersions, match=r"anima .* 4\.2 in .*; unavailable in .*anima\.json"):
        check_one_version([scores, edge])


def test_an_unavailable_tools_records_agree(tmp_path):
    missing = tmp_path / "unavailable.parquet"
    unavailable_rows("anima", "not found", dataset="test").to_parquet(missing)
    assert versions_in(missing) == {("anima", "study", "unavailable")}
    check_one_version([missing, probe(tmp_path / "anima.json", "anima", None)])
