"""Run a whole study from scratch, time it, and project the paper-size run on this machine.

    python benchmarks/study_speed.py [--configfile config.yaml] [--cores 2]

Prints the wall time, the per-pair cost of every tool and of the reference (median and mean
seconds of one call computing all of a tool's metrics), the seconds each rule's jobs took, and
a projection for the paper preset: every rule's measured job-seconds scaled by how its work
grows (job counts from a dry run of the paper preset; timing work by pairs x repeats x the
timed grid's voxels; scoring split into the tools' calls, which grow with the pairs, and a
fixed cost per job). Jobs
that claim every core (the HD timing) run alone, so their seconds add to the wall time as they
are; the others are divided by the cores at the packing efficiency they achieved in this run.
Beside it, the same work on a SLURM cluster of N such machines with the SLURM profile: its
sbatch jobs (group jobs counted once) from a dry run, each with SLURM's cost per job.
Then what the tool workers cost: each tool's worker start and per-call time outside the
tool, measured on the study's own pairs, as a share of the scoring job-seconds.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Mapping
from pathlib import Path

import pandas as pd

from adapters import REGISTRY
from study.dataset import lidc
from study.dataset.realdata import read_pair_manifest
from study.oars import selected_oars
from study.pipeline.config import load_config
from study.records import REFERENCE_VARIANTS, grid_labels
from study.scoring.grid_check import EMPTY_SUFFIX, read_grid_check
from study.scoring.score import read_pairs
from study.scoring.timing import timed_pair_count

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile")]
SLURM_PROFILE = REPO / "profiles/slurm"
# What a job costs on SLURM beyond its own work. The executor plugin (2.6.1) sleeps 5 s before
# each sbatch call, one submission after another (its run_job). Inside the job, Snakemake
# starts twice (batch script, then srun), each time parsing the workflow: 3.5 s of CPU
# (`snakemake --list-rules` with the paper preset: 3.1 s user + 0.4 s system, three runs).
SBATCH_DELAY_SECONDS = 5.0
SLURM_JOB_START_SECONDS = 7.0


def run_study(workdir: Path, configfile: Path, cores: int) -> float:
    """Run every target of the study in `workdir`; return the wall time in seconds."""
    started = time.perf_counter()
    subprocess.run(
        [
            *SNAKEMAKE,
            "--directory",
            str(workdir),
            "--configfile",
            str(configfile),
            "--cores",
            str(cores),
            "--quiet",
            "progress",
        ],
        check=True,
    )
    return time.perf_counter() - started


def planned_pairs(config: Mapping) -> int:
    """Mask pairs of a validated config at one grid: the synthetic cases times their organs,
    else the rows of the manifest (a lidc dataset's written first, as the workflow does, into
    the project's data/ folder, where the dry runs find it)."""
    dataset = config["dataset"]
    if dataset["source"] == "synthetic":
        return dataset["cases"] * len(selected_oars(dataset["oars"]))
    if dataset["source"] == "lidc":
        lidc.prepare(config)
    return len(read_pair_manifest(REPO / dataset["manifest"]))


def share_data(scratch: str | Path) -> None:
    """A dry run in `scratch` sees the project's data/ (a lidc dataset already written there is
    not written again for each dry run)."""
    if (REPO / "data").is_dir():
        (Path(scratch) / "data").symlink_to(REPO / "data")


def dry_run(configfile: Path, cores: int) -> tuple[dict[str, int], set[str]]:
    """Jobs per rule of a fresh run of `configfile` (Snakemake's dry-run job stats), and the
    rules whose jobs claim all `cores` (they run with nothing beside them)."""
    with tempfile.TemporaryDirectory() as scratch:
        share_data(scratch)
        said = subprocess.run(
            [
                *SNAKEMAKE,
                "--directory",
                scratch,
                "--configfile",
                str(configfile),
                "--cores",
                str(cores),
                "--dry-run",
            ],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    stats = said[said.index("Job stats:") :]
    counts = {
        rule: int(count)
        for rule, count in re.findall(r"^(\w+)\s+(\d+)$", stats, re.M)
        if rule != "total"
    }
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    threads: (\d+)$", said, re.M)
    return counts, {rule for rule, threads in jobs if int(threads) >= cores}


def sbatch_jobs(configfile: Path) -> int:
    """Jobs a fresh run of `configfile` submits with the SLURM profile (its dry run): one per
    job outside groups, one per group job, none for the target rule `all`."""
    with tempfile.TemporaryDirectory() as scratch:
        share_data(scratch)
        said = subprocess.run(
            [*SNAKEMAKE, "--directory", scratch, "--configfile", str(configfile)]
            + ["--profile", str(SLURM_PROFILE), "--dry-run"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    return len(re.findall(r"^rule (?!all:)\w+:$", said, re.M)) + said.count("Group job ")


def cluster_projection(
    rules: pd.DataFrame, exclusive: set[str], jobs: int, nodes: int, cores: int, efficiency: float
) -> dict:
    """Wall seconds of the projected work on `nodes` machines of `cores` cores under SLURM.

    W = sum of the projected job-seconds, X = those of the exclusive rules (a node each, at
    most one per job: X / min(nodes, their jobs)); each of the `jobs` sbatch jobs adds o =
    SLURM_JOB_START_SECONDS on its core, and submissions follow each other d =
    SBATCH_DELAY_SECONDS apart. Then
        wall >= max(jobs x d, X / min(nodes, n_X) + (W - X + jobs x o) / (nodes x cores x e))
    with e the packing efficiency measured locally. The overhead jobs x o / W is the share
    of core time SLURM adds.
    """
    alone = rules.index.isin(sorted(exclusive))
    exclusive_seconds = rules.loc[alone, "projected"].sum()
    exclusive_jobs = max(1, int(rules.loc[alone, "paper_jobs"].sum()))
    work = rules["projected"].sum()
    overhead = jobs * SLURM_JOB_START_SECONDS
    compute = exclusive_seconds / min(nodes, exclusive_jobs) + (
        work - exclusive_seconds + overhead
    ) / (nodes * cores * efficiency)
    return {
        "wall": max(jobs * SBATCH_DELAY_SECONDS, compute),
        "submission_bound": jobs * SBATCH_DELAY_SECONDS,
        "overhead_share": overhead / work,
        "mean_job_seconds": work / jobs,
    }


def project(rules: pd.DataFrame, wall: float, cores: int, exclusive: set[str]) -> dict:
    """Projected wall seconds from per-rule job-seconds `sum` and `scale` (work growth).

    Exclusive rules ran alone: their job-seconds were wall time, and scale as such. The rest
    filled wall - exclusive seconds on `cores` cores at packing efficiency
    e = job-seconds / ((wall - exclusive) x cores); projected, they take sum x scale / cores / e.
    """
    alone = rules.index.isin(sorted(exclusive))
    packed_wall = wall - rules.loc[alone, "sum"].sum()
    efficiency = rules.loc[~alone, "sum"].sum() / (packed_wall * cores)
    projected = rules["sum"] * rules["scale"]
    return {
        "wall": projected[alone].sum() + projected[~alone].sum() / cores / efficiency,
        "core_seconds": projected.sum(),
        "efficiency": efficiency,
    }


def scoring_scale(
    job_seconds: float, call_seconds: float, jobs: int, paper_jobs: int, pair_scale: float
) -> float:
    """Growth of score_case's job-seconds at paper size, from two measured parts.

    The tools' calls (call_seconds, the scores' own timings) grow with the pairs; the rest of
    a job (interpreter, imports, reading the masks) is a fixed cost per job and grows with the
    job count, which scoring.cases_per_job sets. Reading the masks really grows with the cases
    a job holds (0.3 s per case for one tool, measured): counting it as fixed undercounts
    batches of several cases by about that much per extra case.
    """
    fixed = job_seconds - call_seconds
    return (call_seconds * pair_scale + fixed / jobs * paper_jobs) / job_seconds


def rule_seconds(workdir: Path, left_out: Collection[str] = ()) -> pd.DataFrame:
    """Seconds of every job that wrote a benchmark file, by rule: count, sum and median of
    them all, and `kept_count`, `kept_sum` of the jobs of no implementation in `left_out`
    (a job's benchmark path names the tool it ran: results/benchmarks/<rule>/.../<tool>/...)."""
    root = workdir / "results/benchmarks"
    rows = []
    for path in root.rglob("*.tsv"):
        parts = path.relative_to(root).with_suffix("").parts
        rows.append(
            {
                "rule": parts[0],
                "seconds": float(pd.read_csv(path, sep="\t")["s"].iloc[0]),
                "kept": not set(parts[1:]) & set(left_out),
            }
        )
    jobs = pd.DataFrame(rows)
    rules = jobs.groupby("rule").seconds.agg(["count", "sum", "median"])
    kept = jobs[jobs["kept"]].groupby("rule").seconds.agg(["count", "sum"])
    rules[["kept_count", "kept_sum"]] = kept.reindex(rules.index, fill_value=0).to_numpy()
    return rules


def implementations(config: Mapping) -> set[str]:
    """What a validated config scores: its reference meshings, tools and cross-checks."""
    meshings = config["reference"]["meshings"]
    variants = {name for name, meshing in REFERENCE_VARIANTS.items() if meshing in meshings}
    return variants | set(config["tools"]) | set(config["cross_checks"])


def per_pair_cost(scores: pd.DataFrame) -> pd.DataFrame:
    """Seconds of one call (all of a tool's metrics on one pair), per tool."""
    calls = scores[scores.status != "unavailable"].drop_duplicates(
        ["tool", "case", "oar", "spacing"]
    )
    return calls.groupby("tool").seconds.agg(["count", "median", "mean"]).sort_values("mean")


def scan_scoring_extra(scores: pd.DataFrame, checked: pd.DataFrame) -> tuple[float, list[str]]:
    """Extra core-seconds the measured scoring calls would take on scan-sized grids, and the
    voxel sizes that this leaves out because the grid check did not run there.

    For each implementation and voxel size, r = mean call seconds on the scan-sized grid /
    the same on the cropped grid in the grid check (the B-empty pair left out); the calls'
    seconds in `scores` grow by (r - 1). A pair the check did not see is assumed to cost what
    the checked ones cost on average, relative to their cropped time. r grows with the scan
    grid's voxel count, so an unchecked voxel size cannot borrow another's.
    """
    calls = checked.loc[~checked["oar"].str.endswith(EMPTY_SUFFIX)].drop_duplicates(
        ["tool", "spacing", "oar", "grid"]
    )
    mean = calls.groupby(["tool", "spacing", "grid"])["seconds"].mean().unstack("grid")
    ratio = (mean["scan"] / mean["cropped"]).rename("ratio")
    measured = (
        scores[scores.status != "unavailable"]
        .drop_duplicates(["tool", "case", "oar", "spacing"])
        .groupby(["tool", "spacing"])["seconds"]
        .sum()
    )
    both = pd.concat([measured, ratio], axis=1, join="inner")
    scored = scores.loc[scores["status"] != "unavailable", "spacing"]
    unchecked = sorted(set(scored) - set(checked["spacing"]))
    return float((both["seconds"] * (both["ratio"] - 1)).sum()), unchecked


def worker_overhead(pairs: pd.DataFrame, tools: list[str], calls: int = 10) -> pd.DataFrame:
    """Per tool: seconds to start its worker (interpreter, numpy, SimpleITK and the adapters:
    the first call's time outside the tool less a later call's; the tool's own import falls in
    the first call's own time, as it did in the scoring process), and
    per call the seconds outside the tool's own timed call (request, answer, the worker
    reading the two mask files), on `calls` of the study's own pairs. Reading alone is timed
    apart: the scoring loop read the masks before calls moved into workers too."""
    from adapters import describe, invoke_files, worker
    from maskio import load_pair

    chosen = pairs.head(calls)
    started = time.perf_counter()
    for pair in chosen.itertuples():
        load_pair(pair.path_a, pair.path_b)
    reading = (time.perf_counter() - started) / len(chosen)
    rows = []
    for tool in [t for t, (_, why) in describe(tools).items() if why is None]:
        worker.stop_all()  # the first call starts the tool's worker
        outside = []
        for pair in [chosen.iloc[0], *chosen.itertuples()]:
            began = time.perf_counter()
            outcome = invoke_files(tool, pair.path_a, pair.path_b, metrics=("HD",))
            outside.append(time.perf_counter() - began - outcome.seconds)
        per_call = sum(outside[1:]) / len(outside[1:])
        rows.append({"tool": tool, "start": outside[0] - per_call, "per_call": per_call})
    worker.stop_all()
    table = pd.DataFrame(rows).set_index("tool")
    table["reading"] = reading
    return table


def overhead_share(
    overhead: pd.DataFrame, scores: pd.DataFrame, rules: pd.DataFrame, jobs: int
) -> tuple[float, float]:
    """(seconds, share of the score_case job-seconds) that workers add to the study's scoring:
    per tool, a worker start for each of its `jobs` scoring jobs, plus its calls times the
    per-call time outside the tool less the reading the scoring loop did before."""
    calls = scores[scores.status != "unavailable"].drop_duplicates(
        ["tool", "case", "oar", "spacing"]
    )
    counts = calls.groupby("tool").size()
    seconds = sum(
        jobs * row["start"] + counts.get(tool, 0) * max(row["per_call"] - row["reading"], 0.0)
        for tool, row in overhead.iterrows()
    )
    return seconds, seconds / float(rules.loc["score_case", "sum"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    parser.add_argument("--paper", type=Path, default=REPO / "workflow/presets/paper.yaml")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--workdir", type=Path, help="keep the run here (default: a temp dir)")
    parser.add_argument(
        "--nodes", type=int, nargs="+", default=[1, 4, 16], help="cluster sizes to project"
    )
    add_record_option(parser, __file__)
    args = parser.parse_args()
    with recorded(args.record):
        measure_and_project(args)


def measure_and_project(args) -> None:
    """Runs the study once, then prints its costs and the paper preset's projection."""

    with tempfile.TemporaryDirectory() as scratch:
        workdir = (args.workdir or Path(scratch)).resolve()
        wall = run_study(workdir, args.configfile.resolve(), args.cores)
        scores = pd.read_parquet(workdir / "results/scores.parquet")
        # Validated, with defaults filled in: a config may leave out cases, sizes or repeats.
        # The paper preset may score fewer implementations than this study (tools: paper
        # against tools: all): the projection counts only the jobs and calls of its own.
        ours, paper = load_config(args.configfile), load_config(args.paper)
        left_out = sorted(implementations(ours) - implementations(paper))
        rules = rule_seconds(workdir, left_out)
        checked = read_grid_check(sorted((workdir / "results/grid_check").glob("*.parquet")))
        # The scored masks (Layout.PAIRS), not the scan-sized ones of the timing.
        pairs = read_pairs(sorted((workdir / "results/masks").glob("*/*/*/pairs.csv")))
        overhead = worker_overhead(pairs, [t for t in scores["tool"].unique() if t in REGISTRY])

    (ours_jobs, exclusive), (paper_jobs, _) = (
        dry_run(args.configfile, args.cores),
        dry_run(args.paper, args.cores),
    )
    pairs = scores[scores.status != "unavailable"].drop_duplicates(["case", "oar", "spacing"])
    n_pairs = len(pairs)
    scale_pairs = (planned_pairs(paper) / planned_pairs(ours)) * (
        len(grid_labels(paper)) / len(grid_labels(ours))
    )
    # scale = projected / measured job-seconds; only the kept jobs (the paper preset's
    # implementations) grow, the others drop out.
    kept_share = rules["kept_sum"] / rules["sum"]
    rules["scale"] = [
        paper_jobs.get(r, 0) / rules.loc[r, "kept_count"] * kept_share[r]
        if rules.loc[r, "kept_count"]
        else 0.0
        for r in rules.index
    ]
    if "time_hd" in rules.index:  # one job per tool; its work grows with pairs x repeats,
        # and with the timed grid's voxels when the timed voxel sizes differ (a scan-sized call
        # of a whole-image tool costs in proportion to them; tools that crop cost less)
        rules.loc["time_hd", "scale"] = kept_share["time_hd"] * (
            (timed_pair_count(paper) / timed_pair_count(ours))
            * (paper["timing"]["repeats"] / ours["timing"]["repeats"])
            * (math.prod(ours["timing"]["voxel_size"]) / math.prod(paper["timing"]["voxel_size"]))
        )
    calls = per_pair_cost(scores)
    kept_calls = calls.loc[~calls.index.isin(left_out)]
    kept_call_seconds = float((kept_calls["count"] * kept_calls["mean"]).sum())
    if "score_case" in rules.index and rules.loc["score_case", "kept_count"]:
        # calls grow with pairs, per-job costs with jobs
        rules.loc["score_case", "scale"] = kept_share["score_case"] * scoring_scale(
            rules.loc["score_case", "kept_sum"],
            kept_call_seconds,
            int(rules.loc["score_case", "kept_count"]),
            paper_jobs["score_case"],
            scale_pairs,
        )
    rules["projected"] = rules["sum"] * rules["scale"]
    rules["paper_jobs"] = [paper_jobs.get(rule, 0) for rule in rules.index]
    projection = project(rules, wall, args.cores, exclusive)

    pd.set_option("display.width", 120)
    print(
        f"study: {args.configfile.name}, {n_pairs} mask pairs (x voxel sizes), {args.cores} cores"
    )
    print(
        f"wall time: {wall:.0f} s ({wall / 60:.1f} min); job-seconds {rules['sum'].sum():.0f}; "
        f"packing efficiency {rules['sum'].sum() / (wall * args.cores):.0%} "
        f"({projection['efficiency']:.0%} outside the jobs that run alone: "
        f"{', '.join(sorted(exclusive)) or 'none'})\n"
    )
    print("per-pair cost of one call computing all of a tool's metrics (s):")
    print(calls.round(4).to_string(), "\n")
    print("job-seconds by rule, and the projection to the paper preset:")
    print(rules.round(2).to_string(), "\n")
    if left_out:
        print(
            f"left out of the projection, since the paper preset does not score them: "
            f"{', '.join(left_out)} (kept_count, kept_sum: the jobs that count)\n"
        )
    if "score_case" in rules.index:
        kept = rules.loc["score_case"]
        print(
            f"score_case, the paper preset's implementations: {kept_call_seconds:.0f} s in tool "
            f"calls (x {scale_pairs:.2f} pairs), {kept['kept_sum'] - kept_call_seconds:.0f} s of "
            f"per-job costs over {int(kept['kept_count'])} jobs (paper preset: "
            f"{paper_jobs['score_case']} jobs, scoring.cases_per_job "
            f"{paper['scoring']['cases_per_job']})\n"
        )
    if "score_case" in rules.index and not overhead.empty:
        tools_scored = scores.loc[scores.status != "unavailable", "tool"].nunique()
        jobs = ours_jobs["score_case"] // max(tools_scored, 1)
        added, share = overhead_share(overhead, scores, rules, jobs)
        print("tool workers: start (s), per call outside the tool's own time (s), reading:")
        print(overhead.round(4).to_string())
        print(
            f"workers add {added:.1f} s to the study's scoring ({jobs} worker starts per tool, "
            f"and each call's time outside the tool less the reading scoring did before): "
            f"{share:.1%} of the score_case job-seconds (aim: under 5 %)\n"
        )
    print(
        f"paper preset ({args.paper.name}): ~{scale_pairs * n_pairs:.0f} mask pairs; "
        f"projected wall time on {args.cores} cores: {projection['wall'] / 3600:.2f} h "
        f"({projection['core_seconds'] / 3600:.2f} core-hours)"
    )
    print_cluster_projection(rules, exclusive, paper_jobs, projection["efficiency"], args)
    if not checked.empty and "score_case" in rules.index:
        extra, unchecked = scan_scoring_extra(scores[~scores["tool"].isin(left_out)], checked)
        extra *= scale_pairs
        print(
            f"  scored on scan-sized grids (field_of_view.policy: scan): + "
            f"{extra / 3600:.2f} core-hours of tool calls (each tool's scan / cropped time per "
            f"call at each voxel size, from the grid check), about "
            f"{(projection['wall'] + extra / args.cores / projection['efficiency']) / 3600:.1f}"
            f" h in all; voxelizing on scan-sized grids not included"
        )
        if unchecked:
            print(
                f"  not projected: the voxel sizes the grid check skipped ({', '.join(unchecked)}"
                "); run with a config whose "
                "grid_check.voxel_sizes is all for the whole figure"
            )


def print_cluster_projection(rules, exclusive, paper_jobs, efficiency, args) -> None:
    """The paper preset on SLURM clusters of args.nodes machines like this one."""
    jobs = sbatch_jobs(args.paper)
    every_job = sum(count for rule, count in paper_jobs.items() if rule != "all")
    runs = {
        n: cluster_projection(rules, exclusive, jobs, n, args.cores, efficiency) for n in args.nodes
    }
    first = runs[args.nodes[0]]
    # Rules without benchmark files (tables, figures: seconds each) add jobs, not job-seconds.
    print(
        f"  on SLURM (profiles/slurm): {every_job} jobs in {jobs} sbatch jobs, "
        f"{first['mean_job_seconds']:.0f} job-seconds each on average; "
        f"{SLURM_JOB_START_SECONDS:.0f} s start-up per sbatch job = "
        f"{first['overhead_share']:.1%} of the job time; submissions "
        f"{SBATCH_DELAY_SECONDS:.0f} s apart take {first['submission_bound'] / 60:.0f} min"
    )
    for nodes, run in runs.items():
        bound = " (bound by submissions)" if run["wall"] == run["submission_bound"] else ""
        print(f"    {nodes:>3} node(s) of {args.cores} cores: {run['wall'] / 3600:.2f} h{bound}")


if __name__ == "__main__":
    main()
