"""`python -m reference A B` in process, for the fast set: the scores the library computes,
and by default each metric's bracket holding its value. The command run as a process, with
the library's brackets compared value by value, is test_bounds' slow test."""

from __future__ import annotations

import json

import numpy as np
import pytest

from maskio import write_mask
from reference import compute_metrics
from reference.__main__ import main


@pytest.fixture
def pair(tmp_path):
    z, y, x = np.mgrid[:12, :12, :12]
    a = (z - 5.5) ** 2 + (y - 5.5) ** 2 + (x - 5.5) ** 2 <= 9
    b = (z - 6.0) ** 2 + (y - 5.5) ** 2 + (x - 6.5) ** 2 <= 9
    paths = [
        write_mask(tmp_path / f"{n}.nii.gz", m, (1.0, 1.0, 1.0)) for n, m in (("a", a), ("b", b))
    ]
    return a, b, [str(path) for path in paths]


def test_the_command_prints_the_librarys_scores_and_brackets(pair, capsys):
    a, b, paths = pair
    assert main([*paths, "--no-bounds", "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores == pytest.approx(compute_metrics(a, b, (1.0, 1.0, 1.0)), abs=1e-12)
    assert main([*paths, "--json"]) == 0  # the brackets by default
    said = json.loads(capsys.readouterr().out)
    assert set(said["brackets"]) == set(scores)
    for key, bracket in said["brackets"].items():
        assert bracket["lower"] <= said["scores"][key] <= bracket["upper"], key
    assert main(paths) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(scores)
    assert all("width" in line for line in lines)


def test_a_bad_argument_exits_with_status_2_naming_it(pair, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([*pair[2], "--tau", "-1"])
    assert stopped.value.code == 2 and "--tau" in capsys.readouterr().err


def test_a_bracket_wider_than_its_aim_is_one_note_on_stderr(pair, capsys, monkeypatch):
    from reference import bounds

    monkeypatch.setattr(bounds, "MAX_ELEMENTS", 500)  # a budget the pair's brackets exceed
    assert main(pair[2]) == 0
    said = capsys.readouterr()
    notes = [line for line in said.err.splitlines() if line.startswith("note: ")]
    assert notes and all("above its aim" in line and "cap of 500" in line for line in notes)
    assert len(said.out.splitlines()) == 7  # the table of the seven metrics, as without
