"""The scoring loop: tidy rows, error rows for failing tools, unavailable once per tool."""

from __future__ import annotations

import math
import stat

import numpy as np
import pandas as pd
import pytest

from adapters import CallSettings
from adapters.base import Adapter, ProgramAdapter
from maskio import write_mask
from reference import bounds
from study.records import BRACKET_COLUMNS, SCORE_COLUMNS
from study.scoring import score as scoring


def box_pair(shift: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Two 6^3 boxes in a 20^3 grid, B shifted by `shift` voxels along axis 0."""
    a = np.zeros((20, 20, 20), bool)
    a[5:11, 5:11, 5:11] = True
    return a, np.roll(a, shift, axis=0)


def pairs_table(folder, n: int = 3) -> pd.DataFrame:
    """A pairs table of n box pairs written as mask files (1 x 1 x 2 mm) into `folder`."""
    rows = []
    for i in range(n):
        paths = [
            write_mask(folder / f"{name}{i}.nii.gz", mask, (1.0, 1.0, 2.0))
            for name, mask in zip("ab", box_pair(1 + i), strict=True)
        ]
        rows.append(
            {
                "case": "case_01",
                "oar": f"OAR{i}",
                "category": "small",
                "spacing": "1x1x2",
                "path_a": str(paths[0]),
                "path_b": str(paths[1]),
            }
        )
    return pd.DataFrame(rows)


class Constant(Adapter):
    """A tool whose HD is the number of foreground voxels of a, and which has no DSC."""

    name, label, metrics = "constant", "Constant", ("HD", "DSC")

    def version(self):
        return "1.0"

    def unavailable(self):
        return None

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {"HD": float(a.sum())}  # DSC deliberately missing


class Crashing(Constant):
    name = "crashing"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        raise RuntimeError("boom on purpose")


class Infinite(Constant):
    name = "infinite"

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        return {"HD": math.inf, "DSC": math.nan}


def fake_program(tmp_path, body: str) -> str:
    script = tmp_path / "fake-tool"
    script.write_text(f"#!/bin/sh\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


class FakeProgram(ProgramAdapter):
    """A program tool whose binary is the script in $FAKE_SCORED_PROGRAM."""

    name, label, metrics, binary = "fakeprogram", "Fake", ("HD",), "fake-scored-program"
    env_var = "FAKE_SCORED_PROGRAM"

    def version(self):
        return "0"

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        return {"HD": float(self.run([str(path_a), str(path_b)], timeout=timeout))}


@pytest.fixture
def program(monkeypatch, tmp_path, registered):
    """The fake program tool, registered, running the shell script `body`."""

    def with_body(body: str) -> str:
        monkeypatch.setenv("FAKE_SCORED_PROGRAM", fake_program(tmp_path, body))
        return registered(FakeProgram())

    return with_body


@pytest.fixture
def registered(monkeypatch):
    """Put fake tools into the registry for the duration of a test."""

    def register(adapter):
        monkeypatch.setitem(scoring.REGISTRY, adapter.name, adapter)
        return adapter.name

    return register


def score(tool, pairs, timeout=30.0, brackets=False):
    settings = CallSettings(percentile=95, tau=2.0, timeout=timeout)
    return scoring.score_pairs(tool, pairs, dataset="unit", settings=settings, brackets=brackets)


def test_rows_follow_the_schema_and_carry_values(registered, tmp_path):
    pairs = pairs_table(tmp_path)
    table = score(registered(Constant()), pairs)
    assert list(table.columns) == [*SCORE_COLUMNS, *BRACKET_COLUMNS]
    assert table[list(BRACKET_COLUMNS)].isna().all().all()  # a tool proves no bracket
    hd = table[table.metric == "HD"]
    assert list(hd.value) == [216.0] * 3 and set(hd.status) == {"ok"}
    assert (hd.seconds >= 0).all() and set(hd.tool_version) == {"1.0"}


def test_a_missing_metric_is_an_error_row_not_a_gap(registered, tmp_path):
    pairs = pairs_table(tmp_path, 1)
    table = score(registered(Constant()), pairs)
    dsc = table[table.metric == "DSC"].iloc[0]
    assert dsc.status == "error" and "no value" in dsc.message and math.isnan(dsc.value)


def test_a_crashing_tool_gives_error_rows_with_its_message(registered, tmp_path):
    pairs = pairs_table(tmp_path)
    table = score(registered(Crashing()), pairs)
    assert len(table) == 6 and set(table.status) == {"error"}
    assert table.message.str.contains("boom on purpose").all()


def test_non_finite_values_get_their_status(registered, tmp_path):
    pairs = pairs_table(tmp_path, 1)
    table = score(registered(Infinite()), pairs).set_index("metric")
    assert table.loc["HD", "status"] == "inf" and table.loc["HD", "value"] == math.inf
    assert table.loc["DSC", "status"] == "nan"


def test_a_hanging_program_times_out_into_error_rows(program, tmp_path):
    pairs = pairs_table(tmp_path, 2)
    tool = program("sleep 30")
    table = score(tool, pairs, timeout=0.5)
    assert set(table.status) == {"error"} and table.message.str.contains("timed out").all()
    assert (table.seconds < 5).all()


def test_a_program_that_exits_non_zero_is_recorded_with_its_words(program, tmp_path):
    pairs = pairs_table(tmp_path, 1)
    tool = program("echo 'bad header' >&2; exit 3")
    row = score(tool, pairs).iloc[0]
    assert row.status == "error" and "code 3" in row.message and "bad header" in row.message


def test_a_program_that_prints_garbage_is_an_error(program, tmp_path):
    pairs = pairs_table(tmp_path, 1)
    tool = program("echo not-a-number")
    assert score(tool, pairs).iloc[0].status == "error"


def test_the_reference_scores_every_metric(tmp_path):
    pairs = pairs_table(tmp_path, 1)
    table = score("reference", pairs).set_index("metric")
    assert set(table.status) == {"ok"}
    # B is A shifted by one voxel of 1 mm along axis 0: HD is exactly 1 mm.
    assert table.loc["HD", "value"] == pytest.approx(1.0, abs=1e-6)
    assert table[list(BRACKET_COLUMNS)].isna().all().all()  # not asked


def test_the_reference_asked_for_brackets_records_each_value_inside_its_own(tmp_path):
    pairs = pairs_table(tmp_path, 1)
    table = score("reference", pairs, brackets=True).set_index("metric")
    assert set(table.status) == {"ok"}
    low, high = table["reference_low"], table["reference_high"]
    assert low.notna().all() and (low <= table.value).all() and (table.value <= high).all()
    assert (high - low <= pd.Series(bounds.WIDTH_AIMS)[table.index]).all()


def test_only_the_reference_proves_brackets():
    with pytest.raises(ValueError, match="only the reference"):
        scoring.implementation("deepmind", brackets=True)


def test_unavailable_is_one_row_per_tool():
    table = scoring.unavailable_rows("anima", "not installed", dataset="unit")
    assert len(table) == 1 and table.iloc[0].status == "unavailable"
    assert table.iloc[0].message == "not installed"


def test_unknown_tool_names_the_known_ones():
    with pytest.raises(ValueError, match="unknown tool 'nope'.*deepmind"):
        scoring.implementation("nope")


def test_collect_orders_and_keeps_every_row(tmp_path, registered):
    pairs = pairs_table(tmp_path)
    paths = []
    for tool in (registered(Constant()), registered(Crashing())):
        path = tmp_path / f"{tool}.parquet"
        score(tool, pairs).to_parquet(path)
        paths.append(path)
    empty = tmp_path / "empty.parquet"
    pd.DataFrame(columns=list(SCORE_COLUMNS)).to_parquet(empty)
    table = scoring.collect([*paths, empty])
    assert len(table) == 12 and list(table.tool.unique()) == ["constant", "crashing"]
