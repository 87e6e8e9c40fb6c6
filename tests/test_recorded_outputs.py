"""The program adapters' readers on output files the real programs wrote, so they run where
the programs are not installed.

`tests/data/` holds what `animaSegPerfAnalyzer` (Anima 4.2) and `EvaluateSegmentation`
(4cff08d) wrote for the anisotropic pair of `test_orientation.py` and for an empty mask. The
program call is replaced by copying the recorded file to where the adapter asked the program
to write it; everything after that is the adapter's own code.
"""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from adapters import REGISTRY, ToolError

RECORDED = Path(__file__).resolve().parent / "data"


def replay(monkeypatch, name: str, recordings: dict[str, str]) -> list[list[str]]:
    """Make the adapter's program calls write the recorded report named for their `-use`
    request (EvaluateSegmentation) or the one recording given (Anima); return the calls."""
    calls = []

    def run(arguments, *, timeout, cwd=None):
        calls.append(list(arguments))
        if name == "anima":
            base = arguments[arguments.index("-o") + 1]
            shutil.copy(RECORDED / recordings["anima"], f"{base}_global.xml")
        else:
            request = arguments[arguments.index("-use") + 1]
            shutil.copy(RECORDED / recordings[request], arguments[arguments.index("-xml") + 1])
        return ""

    monkeypatch.setattr(REGISTRY[name], "run", run)
    return calls


def read(name: str, metrics, tmp_path) -> dict[str, float]:
    return REGISTRY[name]._run_on_files(
        tmp_path / "a.nii.gz",
        tmp_path / "b.nii.gz",
        str(tmp_path),
        tuple(metrics),
        95,
        2.0,
        timeout=10,
    )


def test_anima_measures_map_to_the_study_metrics(monkeypatch, tmp_path):
    calls = replay(monkeypatch, "anima", {"anima": "anima_pair_global.xml"})
    values = read("anima", ("HD", "MASD", "ASSD", "DSC"), tmp_path)
    assert values == {"HD": 3.201562, "MASD": 1.189221, "ASSD": 0.11648, "DSC": 0.78979}
    assert calls[0][:4] == ["-r", str(tmp_path / "a.nii.gz"), "-i", str(tmp_path / "b.nii.gz")]


def test_anima_on_an_empty_mask_reports_nan(monkeypatch, tmp_path):
    replay(monkeypatch, "anima", {"anima": "anima_b_empty_global.xml"})
    values = read("anima", ("HD", "MASD", "ASSD", "DSC"), tmp_path)
    assert all(math.isnan(values[m]) for m in ("HD", "MASD", "ASSD")) and values["DSC"] == 0


def test_evaluatesegmentation_runs_the_percentile_apart(monkeypatch, tmp_path):
    calls = replay(
        monkeypatch,
        "evaluatesegmentation",
        {
            "HDRFDST,AVGDIST,DICE": "evaluatesegmentation_pair.xml",
            "HDRFDST@0.95@": "evaluatesegmentation_percentile.xml",
        },
    )
    values = read("evaluatesegmentation", ("HD", "HD95", "MASD", "DSC"), tmp_path)
    assert values == {"HD": 3.201562, "HD95": 3.041381, "MASD": 0.278077, "DSC": 0.78979}
    assert [call[call.index("-use") + 1] for call in calls] == [
        "HDRFDST,AVGDIST,DICE",
        "HDRFDST@0.95@",
    ]
    assert all(call[call.index("-unit") + 1] == "millimeter" for call in calls)


def test_evaluatesegmentation_on_an_empty_mask_is_an_error_with_its_message(monkeypatch, tmp_path):
    replay(
        monkeypatch,
        "evaluatesegmentation",
        {"HDRFDST,AVGDIST,DICE": "evaluatesegmentation_a_empty.xml"},
    )
    with pytest.raises(ToolError, match="reported no metrics: Fixed image is empty!"):
        read("evaluatesegmentation", ("HD", "MASD", "DSC"), tmp_path)
