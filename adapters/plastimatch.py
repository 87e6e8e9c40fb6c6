"""Plastimatch (PyPI `plastimatch` ships the binary; also Debian `plastimatch`).

Called as `plastimatch dice --dice --hausdorff a.nii.gz b.nii.gz` (reference image first);
the study reads the "(boundary)" lines.
Boundary: erosion with a square-connectivity element and subtraction; distances from a
distance map in mm from the image header.
Definitions: HD = "Hausdorff distance (boundary)"; HD95 = "Percent (0.95) Hausdorff distance
(boundary)", the mean of the two directed 95th percentiles (fixed at 95); MASD = "Avg average
Hausdorff distance (boundary)", the mean of the two directed means; DSC = "DICE".
Quirks: one empty mask gives float-max stand-ins for infinity (about 3.4e38 or half of it);
both empty makes the program exit with an ITK exception. Seconds include writing the files.
"""

from __future__ import annotations

import re

from adapters.base import ProgramAdapter, ToolError, parse_number

_LINES = {
    "HD": "Hausdorff distance (boundary)",
    "HD95": "Percent (0.95) Hausdorff distance (boundary)",
    "MASD": "Avg average Hausdorff distance (boundary)",
    "DSC": "DICE",
}


class Plastimatch(ProgramAdapter):
    name = "plastimatch"
    label = "Plastimatch"
    in_paper = True
    metrics = ("HD", "HD95", "MASD", "DSC")
    fixed_percentile = 95
    binary = "plastimatch"
    env_var = "PLASTIMATCH"
    install_hint = "pip install plastimatch, or apt-get install plastimatch"
    version_pattern = r"version\s+(\S+)"

    def _run_on_files(self, path_a, path_b, folder, metrics, percentile, tau, *, timeout):
        flags = []
        if "DSC" in metrics:
            flags.append("--dice")
        if set(metrics) - {"DSC"}:
            flags.append("--hausdorff")
        said = self.run(["dice", *flags, str(path_a), str(path_b)], timeout=timeout)
        values: dict[str, float] = {}
        for metric in metrics:
            line = _LINES[metric]
            pattern = rf"^{re.escape(line)}\s*[:=]\s*(\S+)"
            found = re.search(pattern, said, re.MULTILINE)
            if found is None:
                raise ToolError(f"plastimatch printed no line {line!r}: {said.strip()[-500:]}")
            values[metric] = parse_number(found.group(1), what=line)
        return values
