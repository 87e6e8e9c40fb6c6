"""The SLURM profile run for real: a reduced study through sbatch on a one-node SLURM cluster
that workflow/cluster/start-local-slurm starts on this machine (as root; it installs the
Debian packages when they are missing), against a local run of the same study.

`make test-cluster` runs this module; `make test` leaves it out (the `cluster` mark). Where
SLURM cannot be started (not root, no packages and no apt-get) it is skipped with the reason.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "workflow/cluster"
PROFILE = REPO / "profiles/slurm"
CANNOT_START = 77  # start-local-slurm's exit status where SLURM cannot run here
# The study on the cluster has ended well within this, or the test fails (measured: 205 to
# 370 s on a 2-core machine loaded by other work; a status command that cannot see finished
# jobs never ends).
RUN_TIMEOUT = 600

pytestmark = pytest.mark.cluster


def reduced_study(path: Path) -> Path:
    """The test preset with one tool and one meshing: every stage and rule, fewer jobs."""
    config = yaml.safe_load((REPO / "workflow/presets/test.yaml").read_text())
    config["tools"] = ["deepmind"]
    config["reference"]["meshings"] = ["discrete_marching_cubes"]
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A fresh one-node cluster for the module, stopped afterwards however the tests end."""
    if os.geteuid() != 0:
        pytest.skip("starting SLURM's daemons needs root")
    state = tmp_path_factory.mktemp("slurm")
    started = subprocess.run(
        [str(CLUSTER / "start-local-slurm"), str(state)], capture_output=True, text=True
    )
    try:
        if started.returncode == CANNOT_START:
            pytest.skip(started.stderr.strip())
        assert started.returncode == 0, started.stderr
        yield {**os.environ, "SLURM_CONF": str(state / "slurm.conf")}
    finally:
        subprocess.run([str(CLUSTER / "stop-local-slurm"), str(state)], check=True)


class Run:
    """The workflow running in `workdir` as its own process group, so that a run past
    RUN_TIMEOUT is killed whole; a thread collects its output and the moment it ended."""

    def __init__(self, workdir: Path, configfile: Path, *args: str, env=None):
        command = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
        command += ["--directory", str(workdir), "--configfile", str(configfile), *args]
        self.process = subprocess.Popen(
            command,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        started = time.perf_counter()
        self.output, self.seconds = "", None

        def collect():
            self.output = self.process.communicate()[0]
            self.seconds = time.perf_counter() - started

        self.collector = threading.Thread(target=collect, daemon=True)
        self.collector.start()

    def finish(self) -> tuple[str, float]:
        """The run's output and wall seconds; the test fails if it did not end, or failed."""
        self.collector.join(RUN_TIMEOUT)
        if self.collector.is_alive():
            os.killpg(self.process.pid, signal.SIGKILL)
            self.collector.join()
            pytest.fail(f"the run did not end within {RUN_TIMEOUT} s:\n{self.output[-3000:]}")
        assert self.process.returncode == 0, self.output[-4000:]
        return self.output, self.seconds


def planned_submissions(configfile: Path, tmp_path: Path) -> Counter:
    """The sbatch jobs a fresh run with the profile makes, from its dry run: a rule's name per
    job outside groups, `<group>_<its rules>` per group job (the names the plugin gives)."""
    said, _ = Run(tmp_path / "plan", configfile, "--dry-run", "--profile", str(PROFILE)).finish()
    jobs: list[list] = []  # [name, rules of a group job]
    for line in said.splitlines():
        if group := re.search(r"Group job (\w+)", line):
            jobs.append([group[1], set()])
        elif (inner := re.match(r"^    rule (\w+):", line)) and jobs and jobs[-1][1] is not None:
            jobs[-1][1].add(inner[1])
        elif top := re.match(r"^rule (\w+):", line):
            jobs.append([top[1], None])
    return Counter(
        name if rules is None else f"{name}_{'_'.join(group_rules(rules))}"
        for name, rules in jobs
        if name != "all"  # the target rule: Snakemake's own bookkeeping, no job
    )


def group_rules(rules: set[str]) -> list[str]:
    """A group job's rules as its name lists them: sorted, the first five and '...'."""
    names = sorted(rules)
    return names if len(names) <= 5 else [*names[:5], "..."]


def slurm_jobs(env) -> pd.DataFrame:
    """Every job the cluster knows (finished ones stay for MinJobAge): name, state, sharing,
    CPUs."""
    listed = subprocess.run(
        ["squeue", "--states=all", "--noheader", "--format=%i|%T|%h|%C|%k"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    rows = [line.split("|", 4) for line in listed.splitlines() if line]
    jobs = pd.DataFrame(rows, columns=["id", "state", "oversubscribe", "cpus", "comment"])
    # The plugin comments each job rule_<rule>[_wildcards_<values>] (a group job:
    # rule_<group>_<its rules>).
    jobs["name"] = jobs["comment"].str.replace(r"^rule_|_wildcards_.*$", "", regex=True)
    return jobs


def comparable(scores: pd.DataFrame) -> pd.DataFrame:
    """Scores without what legitimately changes between runs (timings, warning texts)."""
    keys = ["tool", "spacing", "case", "oar", "metric"]
    return scores.drop(columns=["seconds", "message"]).sort_values(keys, ignore_index=True)


def test_the_shipped_profile_runs_a_study_through_sbatch(cluster, tmp_path):
    configfile = reduced_study(tmp_path / "reduced.yaml")
    # The local run goes alongside: the cluster run mostly waits (submissions, status checks).
    local = Run(tmp_path / "local", configfile, "--cores", "2")
    on_slurm = Run(tmp_path / "slurm", configfile, "--profile", str(PROFILE), env=cluster)
    _, seconds = on_slurm.finish()
    _, local_seconds = local.finish()
    jobs = slurm_jobs(cluster)
    print(
        f"\non the cluster: {seconds:.0f} s, {len(jobs)} sbatch jobs; local: {local_seconds:.0f} s"
    )

    # Every job went through sbatch and finished there; nothing ran on the submitting side.
    assert Counter(jobs["name"]) == planned_submissions(configfile, tmp_path), jobs
    assert set(jobs["state"]) == {"COMPLETED"}, jobs
    # The HD timing had its node to itself, the other jobs shared theirs.
    alone = jobs["name"] == "time_hd"
    assert alone.any() and set(jobs.loc[alone, "oversubscribe"]) == {"NO"}, jobs
    assert "NO" not in set(jobs.loc[~alone, "oversubscribe"]), jobs
    # A group job runs its jobs one after another on the one core it asked for.
    assert set(jobs.loc[~alone, "cpus"]) == {"1"}, jobs

    # The same scores as the local run.
    scores = [
        pd.read_parquet(tmp_path / run / "results/scores.parquet") for run in ("slurm", "local")
    ]
    assert len(scores[0]) > 0
    pd.testing.assert_frame_equal(*(comparable(table) for table in scores))
