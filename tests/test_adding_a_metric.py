"""Adding a metric is one `Metric` in the vocabulary and one formula in the reference.

A throwaway metric, HDmed (the larger of the two directed weighted medians of the surface
distances), is added that way to a copy of the project, with a throwaway tool that offers it.
With no other edit: the configuration accepts it and scores it by default (it is `tested`),
the reference computes it (checked on concentric spheres, where every distance is the gap),
and the workflow scores it, compares it with the reference in the Δ tables and the Wilcoxon
test, and describes it in the tool's card.
"""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from project_copy import THROWAWAY_MODULE, copy_project, run_in, run_workflow

pytestmark = pytest.mark.slow  # copies the project and runs its workflow as a process

METRIC = """    Metric(
        "HDmed",
        "median Hausdorff distance",
        "distance",
        "mm",
        "lower",
        definition="max(P_50{d(x, dB): x in dA}, P_50{d(y, dA): y in dB})",
    ),
"""

FORMULA = '''

def median_hausdorff(d: BothDirections) -> float:
    """HDmed = the larger of the two directed weighted medians."""
    return max(d.a_to_b.percentile(50), d.b_to_a.percentile(50))


FORMULAS["HDmed"] = median_hausdorff
'''

TOOL = '''"""A throwaway tool that offers HD and HDmed (face-connected boundary voxels, EDT)."""

import numpy as np

from adapters.throwaway import Throwaway, directed_distances


class Median(Throwaway):
    name = "median"
    label = "Median"
    metrics = ("HD", "HDmed")

    def _compute(self, a, b, spacing, metrics, percentile, tau):
        there, back = directed_distances(a, b, spacing), directed_distances(b, a, spacing)
        median = float(max(np.median(there), np.median(back)))
        values = {**super()._compute(a, b, spacing, metrics, percentile, tau), "HDmed": median}
        return {key: values[key] for key in metrics}
'''


def add_the_metric(project):
    """The two edits a contributor makes: the vocabulary entry and the reference's formula."""
    vocabulary = project / "vocabulary" / "__init__.py"
    anchor = ')\n"""Every metric, in the paper\'s order'
    text = vocabulary.read_text()
    assert text.count(anchor) == 1
    vocabulary.write_text(text.replace(anchor, METRIC + anchor))
    formulas = project / "reference" / "metrics.py"
    assert "FORMULAS: dict" in formulas.read_text()
    formulas.write_text(formulas.read_text() + FORMULA)


@pytest.fixture(scope="module")
def project_with_a_new_metric(tmp_path_factory):
    modules = {"throwaway": THROWAWAY_MODULE, "median": TOOL}
    project = copy_project(tmp_path_factory.mktemp("project"), modules, {"Median": "median"})
    add_the_metric(project)
    return project


def test_the_config_scores_it_by_default(project_with_a_new_metric):
    said = run_in(
        project_with_a_new_metric,
        "-c",
        "from study.pipeline.config import load_config\n"
        "print(load_config({})['metrics']['scored'])",
    ).stdout
    assert "'HDmed'" in said


def test_the_reference_computes_it(project_with_a_new_metric):
    """Concentric balls of radii 8 and 11 voxels: every distance is about 3 mm, so the median
    is 3 mm to within the voxelization's error, and it lies below HD95."""
    said = run_in(
        project_with_a_new_metric,
        "-c",
        "import numpy as np\n"
        "from reference import compute_metrics\n"
        "z, y, x = np.indices((32, 32, 32)) - 15.5\n"
        "r = np.sqrt(x * x + y * y + z * z)\n"
        "s = compute_metrics(r <= 8, r <= 11, (1, 1, 1), metrics=['HD95', 'HDmed'])\n"
        "print(s['HDmed'], s['HD95'])",
    ).stdout
    median, hd95 = map(float, said.split())
    assert median == pytest.approx(3.0, abs=0.5)
    assert median <= hd95


def test_the_workflow_scores_and_compares_it(project_with_a_new_metric, tmp_path):
    project = project_with_a_new_metric
    config = yaml.safe_load((project / "workflow/presets/test.yaml").read_text())
    config.update(tools=["median"], voxel_sizes=[[2, 2, 2]])
    config["dataset"]["oars"] = ["Parotid_L", "Glnd_Submand_R"]
    config["metrics"]["scored"] = ["HD", "HDmed"]
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    (tmp_path / "median.yaml").write_text(yaml.safe_dump(config))
    run_workflow(project, tmp_path, tmp_path / "median.yaml")
    scores = pd.read_parquet(tmp_path / "results/scores.parquet")
    scored = scores[scores.metric == "HDmed"]
    assert set(scored.tool) == {"reference", "median"}
    assert set(scored.status) == {"ok"}
    table = pd.read_csv(tmp_path / "results/tables/table_a1.csv")
    assert "HDmed" in set(table.metric)
    wilcoxon = pd.read_csv(tmp_path / "results/tables/table_wilcoxon.csv")
    assert "HDmed" in set(wilcoxon.metric)
    assert "HDmed" in (tmp_path / "results/cards.md").read_text()
