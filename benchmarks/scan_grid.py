"""HD time and peak memory of every tool on scan-sized masks, beside the same pairs cropped.

    python benchmarks/scan_grid.py [--oars Cochlea_L Parotid_L ...] [--spacing 1 1 1]
                                   [--repeats 3] [--tools deepmind medpy ...]

One synthetic case (the default study's seed) is generated and voxelized twice at `--spacing`:
on the study's cropped grids (each pair's bounding box plus field_of_view.margin_mm) and on the
scan-sized grid (field_of_view.scan_mm, the default config's, around all of the case's organs).
Each tool then runs in a fresh process of its own: one untimed warm-up call, then HD alone on
every pair and grid, `--repeats` times; the process's peak resident memory (ru_maxrss, native
memory included; for a program tool the larger of the Python process and the program's) is
what a job running that tool on scan-sized masks needs. Printed: median seconds per pair on
each grid, their ratio, and the peak memory, fastest tool first at scan size.
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

from study.oars import CATEGORIES, OARS
from study.pipeline.config import load_config
from study.records import spacing_label
from study.scoring.score import implementation
from study.scoring.timing import cropped_to_masks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from recording import add_record_option, recorded  # noqa: E402  (a sibling script)

REPO = Path(__file__).resolve().parents[1]
GRIDS = ("cropped", "scan")


def voxelize_both(
    workdir: Path, oars: list[str], spacing: tuple[float, ...], config: dict
) -> dict[str, Path]:
    """pairs.csv of one synthetic case on each grid (cropped, scan)."""
    from study.dataset.synthetic import write_case
    from study.dataset.voxelize import voxelize_case

    manifest = write_case(workdir / "data", 1, config["dataset"]["seed"], oars)
    fov = config["field_of_view"]
    return {
        "cropped": voxelize_case(
            manifest, [spacing], [workdir / "cropped"], margin_mm=fov["margin_mm"]
        )[0],
        "scan": voxelize_case(manifest, [spacing], [workdir / "scan"], scan_mm=fov["scan_mm"])[0],
    }


def voxelize_in_child(workdir: Path, oars: list[str], spacing, configfile: Path) -> dict:
    """`voxelize_both` in a fresh Python: the masks never enter this process, whose memory
    every tool's process would otherwise start from (Linux carries ru_maxrss across fork)."""
    said = subprocess.run(
        [
            sys.executable,
            __file__,
            "--voxelize",
            str(workdir),
            "--configfile",
            str(configfile),
            "--spacing",
            *map(str, spacing),
            "--oars",
            *oars,
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    return json.loads(said.stdout.strip().splitlines()[-1])


def time_in_child(tool: str, pairs: dict[str, str], repeats: int) -> dict:
    """Run `measure` for one tool in a fresh Python; its seconds per pair and peak memory."""
    said = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            tool,
            "--repeats",
            str(repeats),
            "--pairs",
            json.dumps(pairs),
        ],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    return json.loads(said.stdout.strip().splitlines()[-1])


def measure(tool: str, pairs: dict[str, str], repeats: int) -> dict:
    """In the child: median HD seconds per pair on each grid, the peak memory, the shapes."""
    from adapters import invoke
    from maskio import read_mask
    from study.scoring.score import read_pairs

    adapter = implementation(tool)
    result: dict = {"tool": tool}
    for grid, path in pairs.items():
        table = read_pairs([path])
        seconds, errors, shapes = [], 0, set()
        for index, pair in enumerate(table.itertuples(index=False)):
            a, spacing, _ = read_mask(pair.path_a)
            b, _, _ = read_mask(pair.path_b)
            shapes.add("x".join(map(str, a.shape)))
            if index == 0:
                invoke(adapter, *cropped_to_masks(a, b), spacing, metrics=("HD",))
            for _ in range(repeats):
                gc.collect()  # as study.scoring.timing does
                outcome = invoke(adapter, a, b, spacing, metrics=("HD",))
                errors += outcome.error is not None
                seconds.append(outcome.seconds)
        result[f"{grid}_s"] = float(pd.Series(seconds).median())
        result[f"{grid}_errors"] = errors
        result[f"{grid}_shapes"] = sorted(shapes)
    # Linux reports ru_maxrss in KiB: the process's peak, imports and native memory included,
    # or a program tool's own process if that was larger.
    result["peak_mb"] = (
        max(
            resource.getrusage(who).ru_maxrss
            for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        )
        / 1024
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    first_of_each_category = [
        next(oar for oar, category in OARS.items() if category == wanted) for wanted in CATEGORIES
    ]
    parser.add_argument("--oars", nargs="+", default=first_of_each_category)
    parser.add_argument(
        "--spacing",
        nargs=3,
        type=float,
        default=None,
        help="voxel size in mm (default: the config's timing.voxel_size)",
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    parser.add_argument("--tools", nargs="+")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--pairs", help=argparse.SUPPRESS)
    parser.add_argument("--voxelize", type=Path, help=argparse.SUPPRESS)
    add_record_option(parser, __file__)
    args = parser.parse_args()
    if args.voxelize:
        pairs = voxelize_both(
            args.voxelize, args.oars, tuple(args.spacing), load_config(args.configfile)
        )
        print(json.dumps({grid: str(path) for grid, path in pairs.items()}))
        return
    if args.child:
        print(json.dumps(measure(args.child, json.loads(args.pairs), args.repeats)))
        return
    with recorded(args.record):
        compare_grids(args)


def compare_grids(args) -> None:
    """Times every available tool on both grids, one child process per tool."""
    config = load_config(args.configfile)
    spacing = tuple(args.spacing or config["timing"]["voxel_size"])
    tools = args.tools or ["reference", *config["tools"]]
    tools = [tool for tool in tools if implementation(tool).unavailable() is None]
    with tempfile.TemporaryDirectory() as scratch:
        pairs = voxelize_in_child(Path(scratch), args.oars, spacing, args.configfile)
        rows = [time_in_child(tool, pairs, args.repeats) for tool in tools]
    table = pd.DataFrame(rows).set_index("tool").sort_values("scan_s")
    table["scan / cropped"] = table["scan_s"] / table["cropped_s"]
    pd.set_option("display.width", 140)
    print(
        f"{len(args.oars)} pairs ({', '.join(args.oars)}) at {spacing_label(spacing)} mm, "
        f"{args.repeats} repeat(s); scan grid {table['scan_shapes'].iloc[0]} voxels, "
        f"field_of_view.scan_mm {config['field_of_view']['scan_mm']}"
    )
    print(
        table[["cropped_s", "scan_s", "scan / cropped", "peak_mb", "cropped_errors", "scan_errors"]]
        .round(3)
        .to_string()
    )


if __name__ == "__main__":
    main()
