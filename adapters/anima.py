"""Anima's `animaSegPerfAnalyzer` (Inria Empenn; not on PyPI or Debian, built from source).

Called as `animaSegPerfAnalyzer -r a.nii.gz -i b.nii.gz -o <base> -d -s -X`; `-o` is a base
name and the program writes `<base>_global.xml`, whose `measure` elements are read here.
Boundary: ITK contour of each mask (square-connectivity erosion and subtraction); distances
from ITK's distance filters in mm.
Definitions: HD = "HausdorffDistance"; MASD = "ContourMeanDistance", the maximum (not the mean)
of the two directed mean contour distances; ASSD = "SurfaceDistance", a pooled mean;
DSC = "Dice". Values carry the six decimals the program writes. Seconds include the files.
"""

from __future__ import annotations

from pathlib import Path

from adapters.base import ProgramAdapter, parse_number

_MEASURES = {
    "HD": "HausdorffDistance",
    "MASD": "ContourMeanDistance",
    "ASSD": "SurfaceDistance",
    "DSC": "Dice",
}


class Anima(ProgramAdapter):
    name = "anima"
    label = "Anima"
    in_paper = True
    metrics = ("HD", "MASD", "ASSD", "DSC")
    binary = "animaSegPerfAnalyzer"
    env_var = "ANIMA_SEG_PERF_ANALYZER"
    install_hint = "`make tools` builds it from github.com/Inria-Empenn/Anima-Public"
    version_pattern = r"version:\s*(\S+)"

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        base = Path(folder) / "anima"
        self.run(
            ["-r", str(path_a), "-i", str(path_b), "-o", str(base), "-d", "-s", "-X"],
            timeout=timeout,
        )
        root = self.read_xml_report(base.with_name(base.name + "_global.xml"))
        measures = {node.get("name"): node.text for node in root.iter("measure")}
        values: dict[str, float] = {}
        for metric in metrics:
            if _MEASURES[metric] in measures:
                values[metric] = parse_number(measures[_MEASURES[metric]], what=_MEASURES[metric])
        return values
