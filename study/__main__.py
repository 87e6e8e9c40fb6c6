"""Command line of the study's stages: `python -m study {probe,timing,observers,cards,publish}`.

probe [--tools ...] --out DIR
               edge-case records (Table A3), one DIR/<tool>.json per tool
timing --pairs pairs.csv [--pairs ...] --repeats N [--tools ...] [--grid NAME] --out DIR
               HD timing rows (Fig. A5), one DIR/<tool>.parquet per tool
observers --scores scores.parquet --pairs pairs.csv [--pairs ...]
               prints the data report: per OAR category, the observers' DSC and the
               reference's HD and HD95 between them (the workflow's table_observers)
cards --scores scores.parquet [--edge-cases ...] [--timing ...] [--grid-check ...] --out DIR
               the tool cards, the recommendations and the interval table of any scores
               table (the workflow's cards rule), written into DIR
publish --configfile CONFIG [--results results] [--compare OTHER_RESULTS]
        [--compare-config OTHER_CONFIG] [--note TEXT ...] [--title T] [--lead TEXT ...]
        --out PAGE.md
               a finished run as a page of the docs (docs/results/lidc.md), its figures in a
               folder beside it; --compare sets its verdicts beside another run's
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from adapters import REGISTRY, CallSettings
from adapters.calls import DEFAULT_SETTINGS
from maskio.cli import percentile, positive_mm


def _probe(arguments) -> int:
    from study.scoring.edge_cases import probe

    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    for name in arguments.tools or list(REGISTRY):
        settings = CallSettings(
            percentile=arguments.percentile, tau=arguments.tau, timeout=arguments.timeout
        )
        record = probe(REGISTRY[name], settings)
        (out / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
        print(f"{name}: {record['status']}, {len(record['records'])} records")
    return 0


def _timing(arguments) -> int:
    import pandas as pd

    from study.scoring.timing import time_hd

    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    missing = [path for path in arguments.pairs if not Path(path).is_file()]
    if missing:
        arguments.parser.exit(2, f"error: {missing[0]}: pairs file not found\n")
    tables = [(Path(p).parent, pd.read_csv(p)) for p in arguments.pairs]
    for name in arguments.tools or list(REGISTRY):
        frames = [
            time_hd(
                REGISTRY[name],
                table.to_dict("records"),
                arguments.repeats,
                base=base,
                settings=CallSettings(timeout=arguments.timeout),
                dataset=arguments.dataset,
                grid=arguments.grid,
            )
            for base, table in tables
        ]
        timing = pd.concat(frames, ignore_index=True)
        timing.to_parquet(out / f"{name}.parquet", index=False)
        ok = timing[timing["status"] == "ok"]["seconds"]
        median = f"{ok.median():.3f} s" if len(ok) else "n/a"
        print(f"{name}: {len(timing)} rows, median {median}")
    return 0


def _observers(arguments) -> int:
    from study.analysis.observers import agreement_table, as_text, observer_agreement
    from study.analysis.read import read_scores

    try:
        agreement = observer_agreement(read_scores(arguments.scores), arguments.pairs)
    except (FileNotFoundError, ValueError) as error:
        arguments.parser.exit(2, f"error: {error}\n")
    print(as_text(agreement_table(agreement)), end="")
    return 0


def _cards(arguments) -> int:
    from study.analysis import verdict_text, verdicts
    from study.analysis.cards import make_cards
    from study.analysis.read import read_inputs
    from study.pipeline.analysis_plan import cards_paths, verdict_table_path

    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    outputs = {key: out / Path(path).name for key, path in cards_paths().items()}
    table_path = out / Path(verdict_table_path()).name
    try:
        inputs = read_inputs(
            arguments.scores,
            grid_check_paths=arguments.grid_check,
            edge_case_paths=arguments.edge_cases,
        )
        table = verdicts.verdict_table(inputs.scores, inputs.grid_check, inputs.edge_cases)
        table.to_csv(table_path, index=False)
        recommended = make_cards(
            arguments.scores,
            table_path,
            outputs,
            timing_paths=arguments.timing,
            grid_check_paths=arguments.grid_check,
            edge_case_paths=arguments.edge_cases,
        )
    except (FileNotFoundError, ValueError) as error:
        arguments.parser.exit(2, f"error: {error}\n")
    overall = verdict_text.of_stratum(recommended)
    used = overall.loc[overall["verdict"] == "use"]
    tools = verdict_text.recommended_tools(recommended)
    print(
        f"{out}: cards of {len(tools)} tools; {len(used)} of "
        f"{len(overall)} (metric, voxel size, tool) rows recommended"
    )
    return 0


def _publish(arguments) -> int:
    from adapters.environments import STUDY_ENVIRONMENT
    from study.analysis.delta import measured
    from study.analysis.labels import tool_versions
    from study.analysis.published import MASKS_MADE, Run, citations, write_page
    from study.pipeline.config import ConfigError, load_config

    try:
        config = load_config(arguments.configfile)
        other = load_config(arguments.compare_config) if arguments.compare else None
    except ConfigError as error:
        arguments.parser.exit(2, f"error: {error}\n")
    dataset = config["dataset"]
    results = Path(arguments.results)
    for folder in filter(None, [results, arguments.compare]):
        if not (Path(folder) / "tables/recommendations.csv").is_file():
            arguments.parser.exit(
                2, f"error: {folder}: no finished run here (no tables/recommendations.csv)\n"
            )
    manifest = Path(dataset["manifest"]) if dataset["manifest"] else None
    setup = [
        f"Made with `make run CONFIG={arguments.configfile}`, then `python -m study publish "
        f"--configfile {arguments.configfile} --out {arguments.out}`.",
        *arguments.note,
    ]
    run = Run(results, manifest)
    scored = run.scores.loc[run.scores["environment"] == STUDY_ENVIRONMENT]
    versions = tool_versions(measured(scored))
    tau = config["metrics"]["tau_mm"]
    out = write_page(
        run,
        Path(arguments.out),
        title=arguments.title or f"Results: {dataset['name']}",
        setup=setup,
        other=Run(Path(arguments.compare)) if arguments.compare else None,
        repo=Path(__file__).resolve().parents[1],
        citations=citations(dataset["source"], versions),
        tau_differs=other is not None and other["metrics"]["tau_mm"] != tau,
        made=MASKS_MADE.get((dataset["source"], dataset["dimension"]), ()),
        lead=arguments.lead,
    )
    print(f"{out}: written, its files in {out.with_suffix('')}/")
    return 0


def _repeats(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(
        prog="python -m study",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = main.add_subparsers(dest="command", required=True)

    def add(name: str, handler, help_text: str) -> argparse.ArgumentParser:
        command = commands.add_parser(name, help=help_text)
        command.add_argument(
            "--tools",
            nargs="+",
            choices=list(REGISTRY),
            metavar="TOOL",
            help=f"registry keys (default: all): {', '.join(REGISTRY)}",
        )
        command.add_argument(
            "--timeout",
            type=positive_mm,
            default=DEFAULT_SETTINGS.timeout,
            help="seconds per tool call",
        )
        command.add_argument("--out", required=True, help="output folder")
        command.set_defaults(handler=handler, parser=command)
        return command

    probing = add("probe", _probe, "edge-case probe (Table A3)")
    probing.add_argument("--percentile", type=percentile, default=DEFAULT_SETTINGS.percentile)
    probing.add_argument(
        "--tau", type=positive_mm, default=DEFAULT_SETTINGS.tau, help="NSD/BIoU tolerance, mm"
    )
    timing = add("timing", _timing, "HD timing on pairs.csv files (Fig. A5)")
    timing.add_argument("--pairs", nargs="+", required=True)
    timing.add_argument("--repeats", type=_repeats, default=3)
    timing.add_argument("--dataset", default="")
    timing.add_argument(
        "--grid", default="", help="field of view the masks were voxelized with (recorded per row)"
    )
    observers = commands.add_parser(
        "observers", help="data report: how far apart the observers are, per OAR category"
    )
    observers.add_argument("--scores", required=True, help="the study's scores.parquet")
    observers.add_argument(
        "--pairs", nargs="+", required=True, help="the voxelization's pairs.csv files"
    )
    observers.set_defaults(handler=_observers, parser=observers)
    cards = commands.add_parser(
        "cards", help="tool cards, recommendations and the interval table of a scores table"
    )
    cards.add_argument("--scores", required=True, help="a scores.parquet")
    cards.add_argument("--edge-cases", nargs="*", default=[], help="edge-case records (.json)")
    cards.add_argument("--timing", nargs="*", default=[], help="HD timing records (.parquet)")
    cards.add_argument("--grid-check", nargs="*", default=[], help="grid-check records (.parquet)")
    cards.add_argument("--out", required=True, help="output folder")
    cards.set_defaults(handler=_cards, parser=cards)
    publish = commands.add_parser("publish", help="a finished run as a page of the docs")
    publish.add_argument("--configfile", required=True, help="the run's configuration")
    publish.add_argument("--results", default="results", help="the run's results folder")
    publish.add_argument("--compare", help="another run's results folder, set beside it")
    publish.add_argument(
        "--compare-config", default="config.yaml", help="the other run's configuration"
    )
    publish.add_argument("--note", nargs="*", default=[], help="set-up lines to add (wall time)")
    publish.add_argument("--title", help="the page's title")
    publish.add_argument(
        "--lead", nargs="*", default=[], help="paragraphs under the title (what the page is)"
    )
    publish.add_argument("--out", required=True, help="the page (Markdown)")
    publish.set_defaults(handler=_publish, parser=publish)
    return main


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    return arguments.handler(arguments)


if __name__ == "__main__":
    sys.exit(main())
