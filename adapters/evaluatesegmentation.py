"""EvaluateSegmentation (VISCERAL; not on PyPI or Debian, built from source).

Called as `EvaluateSegmentation a.nii.gz b.nii.gz -use HDRFDST,AVGDIST,DICE -unit millimeter
-xml out.xml` (ground truth first). The program reports only the first of two HDRFDST
requests, so HDp gets a run of its own with `-use HDRFDST@0.95@`.
Boundary: none as such: only non-overlapping voxels enter the distance computations, with
early-exit optimisations (and random sampling, so HDp and MASD are non-deterministic).
Definitions: HD = HDRFDST; HDp = HDRFDST at the quantile, over the union of both directed
sets; MASD = AVGDIST ("average Hausdorff distance", mean of the directed means); DSC = DICE.
Seconds include writing the files and both runs.
"""

from __future__ import annotations

from pathlib import Path

from adapters.base import ProgramAdapter, ToolError, parse_number

_SYMBOLS = {"HD": "HDRFDST", "HD95": "HDRFDST", "MASD": "AVGDIST", "DSC": "DICE"}


class EvaluateSegmentation(ProgramAdapter):
    name = "evaluatesegmentation"
    label = "EvaluateSegmentation"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "DSC")
    binary = "EvaluateSegmentation"
    env_var = "EVALUATE_SEGMENTATION"
    varying_metrics = frozenset({"HD95", "MASD"})  # srand(time(NULL)) in its sampling
    install_hint = "`make tools` builds it from github.com/Visceral-Project/EvaluateSegmentation"

    def version(self) -> str:
        # The program prints no version; the source repository has no releases either.
        return "unversioned" if self.unavailable() is None else "not installed"

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        values: dict[str, float] = {}
        first_run = [metric for metric in metrics if metric != "HD95"]
        if first_run:
            symbols = ",".join(dict.fromkeys(_SYMBOLS[metric] for metric in first_run))
            found = self._run_once(path_a, path_b, Path(folder) / "first.xml", symbols, timeout)
            for metric in first_run:
                values[metric] = _value(found, _SYMBOLS[metric])
        if "HD95" in metrics:
            request = f"HDRFDST@{percentile / 100:g}@"
            found = self._run_once(
                path_a, path_b, Path(folder) / "percentile.xml", request, timeout
            )
            values["HD95"] = _value(found, "HDRFDST")
        return values

    def _run_once(self, path_a, path_b, report: Path, use: str, timeout: float) -> dict:
        self.run(
            [str(path_a), str(path_b), "-use", use, "-unit", "millimeter", "-xml", str(report)],
            timeout=timeout,
        )
        root = self.read_xml_report(report)
        metrics = root.find("metrics")
        if metrics is None:
            # An empty mask: the program exits with 0 and writes only <message>.
            said = (root.findtext("message") or "").strip()
            raise ToolError(f"EvaluateSegmentation reported no metrics: {said or 'no message'}")
        return {node.tag: node.get("value") for node in metrics}


def _value(found: dict, symbol: str) -> float:
    if symbol not in found:
        raise ToolError(f"EvaluateSegmentation reported no {symbol} (got {sorted(found)})")
    return parse_number(found[symbol], what=symbol)
