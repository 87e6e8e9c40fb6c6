"""User-supplied masks: the pair manifest, listing a HaN-Seg folder, and meshing.

A pair manifest is a CSV with one row per (case, OAR): columns case, oar, path_a, path_b
(NRRD or NIfTI; relative paths are relative to the CSV; an empty path = that observer drew
nothing) and optionally label_a, label_b (label number in a label map; empty = binary mask)
and category (needed only for organs outside the 30 HaN-Seg names). Masks are meshed with
marching cubes plus gentle smoothing, as in the HDilemma study, and the meshes go to a folder
under results/; the user's folders are only ever read.

Command line, to list a HaN-Seg-style layout (one folder per observer, each holding
case_XX/case_XX_OAR_<Name>.seg.nrrd):

    python -m study.dataset.realdata hanseg OBSERVER_A_DIR OBSERVER_B_DIR manifest.csv
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from maskio import InputError, check_same_grid, load_mask, write_mask
from study.dataset.meshes import mesh_from_mask, write_manifest, write_observer_meshes
from study.dataset.voxelize import PAIR_COLUMNS, voxelize_case
from study.dataset.whole import replace_whole
from study.oars import CATEGORIES, KNOWN_CATEGORIES, OARS
from study.records import NATIVE, parse_spacing_label

REQUIRED_COLUMNS = ("case", "oar", "path_a", "path_b")
OPTIONAL_COLUMNS = ("label_a", "label_b", "category")
HANSEG_FILE = re.compile(r"^(case_\d+)_OAR_(.+)\.seg\.nrrd$")


def read_pair_manifest(path: str | Path) -> pd.DataFrame:
    """Validated pair manifest with absolute `file_a`/`file_b` (None = drew nothing),
    integer-or-None `label_a`/`label_b` and a `category` for every row."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: pair manifest not found")
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in REQUIRED_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(
            f"{path}: pair manifest lacks column(s) {missing}; required: {list(REQUIRED_COLUMNS)}"
        )
    if table.empty:
        raise InputError(f"{path}: pair manifest has no rows")
    for column in OPTIONAL_COLUMNS:
        if column not in table.columns:
            table[column] = ""
    duplicated = table.duplicated(["case", "oar"])
    if duplicated.any():
        first = table[duplicated].iloc[0]
        raise InputError(f"{path}: case {first['case']} OAR {first['oar']} is listed twice")
    rows = [_checked_row(path, line + 2, row) for line, row in table.iterrows()]
    return pd.DataFrame(rows)


def _checked_row(path: Path, line: int, row: pd.Series) -> dict:
    where = f"{path}, line {line}"
    if not row["case"] or not row["oar"]:
        raise InputError(f"{where}: case and oar must not be empty")
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", row["case"]):
        raise InputError(f"{where}: case {row['case']!r} may only hold letters, digits, _ . -")
    category = row["category"] or OARS.get(row["oar"], "")
    if not category:
        raise InputError(
            f"{where}: unknown OAR name {row['oar']!r}; use one of the 30 HaN-Seg "
            f"names or give a category ({', '.join(CATEGORIES)})"
        )
    if category not in KNOWN_CATEGORIES:
        raise InputError(f"{where}: category {category!r} is not one of {KNOWN_CATEGORIES}")
    files = {}
    for observer in ("a", "b"):
        text = row[f"path_{observer}"]
        file = (path.parent / text).resolve() if text else None
        if file is not None and not file.is_file():
            raise InputError(f"{where}: mask file {text!r} not found (looked at {file})")
        files[observer] = file
    if files["a"] is None and files["b"] is None:
        raise InputError(f"{where}: both path_a and path_b are empty")
    labels = {}
    for observer in ("a", "b"):
        text = row[f"label_{observer}"]
        if text and not re.fullmatch(r"\d+", text):
            raise InputError(f"{where}: label_{observer} must be a whole number, got {text!r}")
        labels[observer] = int(text) if text else None
    return {
        "case": row["case"],
        "oar": row["oar"],
        "category": category,
        "file_a": files["a"],
        "file_b": files["b"],
        "label_a": labels["a"],
        "label_b": labels["b"],
    }


def read_mask_pair(row: dict) -> dict[str, tuple | None]:
    """Both observers' (mask, spacing, origin); None for an empty path. Grids must agree."""
    loaded = {
        obs: load_mask(row[f"file_{obs}"], row[f"label_{obs}"]) if row[f"file_{obs}"] else None
        for obs in ("a", "b")
    }
    if loaded["a"] is not None and loaded["b"] is not None:
        check_same_grid(loaded["a"], loaded["b"], str(row["file_a"]), str(row["file_b"]))
    return {
        obs: None if mask is None else (mask.array, mask.spacing, mask.origin)
        for obs, mask in loaded.items()
    }


def case_rows(manifest: str | Path, case: str, oars: Sequence[str] | str = "all") -> pd.DataFrame:
    """The manifest's rows of `case` (of the OARs in `oars`, or all); InputError if none."""
    table = read_pair_manifest(manifest)
    rows = table[table["case"] == case]
    if oars != "all":
        rows = rows[rows["oar"].isin(list(oars))]
    if rows.empty:
        raise InputError(f"{manifest}: no rows for case {case!r}")
    return rows


def mesh_user_case(
    manifest: str | Path,
    case: str,
    out_dir: str | Path,
    oars: Sequence[str] | str = "all",
    dimension: int | None = None,
) -> list[dict]:
    """Mesh every pair of `case` (of the OARs in `oars`, or all) into
    out_dir/<oar>__<A|B>.vtp and write out_dir/manifest.csv.

    Refuses an `out_dir` inside a folder that holds the user's masks, and, when `dimension`
    is given (the study's: 2 or 3), a mask of another dimension, by its file.
    """
    rows = case_rows(manifest, case, oars)
    out_dir = Path(out_dir).resolve()
    for file in [*rows["file_a"], *rows["file_b"]]:
        if file is not None and out_dir.is_relative_to(Path(file).parent):
            raise InputError(
                f"{out_dir}: meshes must not be written into the user's data "
                f"folder {Path(file).parent}"
            )
    records = []
    for row in rows.to_dict("records"):
        masks = read_mask_pair(row)
        for observer, item in masks.items():
            if item is not None and dimension is not None and item[0].ndim != dimension:
                raise InputError(
                    f"{row[f'file_{observer}']}: a {item[0].ndim}D mask in a {dimension}D study "
                    f"(dataset.dimension and voxel_sizes say {dimension}D)"
                )
        meshes = {
            observer.upper(): mesh_from_mask(*item) if item is not None else None
            for observer, item in masks.items()
        }
        records += write_observer_meshes(
            out_dir, case=case, oar=row["oar"], category=row["category"], meshes=meshes
        )
    write_manifest(records, out_dir / "manifest.csv")
    return records


def prepare_user_case(
    manifest: str | Path,
    case: str,
    mesh_dir: str | Path,
    grids: Sequence[str],
    mask_dirs: Sequence[str | Path],
    *,
    margin_mm: float,
    size_mm: Sequence[float] | None = None,
    scan_mm: Sequence[float] | None = None,
    oars: Sequence[str] | str = "all",
) -> None:
    """One case of the user's masks, ready to score: meshed into mesh_dir (`mesh_user_case`),
    voxelized at each voxel-size label of `grids` into its folder of `mask_dirs`
    (`study.dataset.voxelize.voxelize_case`), and for the label "native" cropped on its own
    grid (`write_native_case`)."""
    folders = dict(zip(grids, map(Path, mask_dirs), strict=True))
    sizes = [label for label in grids if label != NATIVE]
    dimension = len(parse_spacing_label(sizes[0])) if sizes else None
    mesh_user_case(manifest, case, mesh_dir, oars, dimension)
    voxelize_case(
        Path(mesh_dir) / "manifest.csv",
        [parse_spacing_label(label) for label in sizes],
        [folders[label] for label in sizes],
        margin_mm=margin_mm,
        size_mm=size_mm,
        scan_mm=scan_mm,
    )
    if NATIVE in folders:
        write_native_case(manifest, case, folders[NATIVE], margin_mm=margin_mm, oars=oars)


def write_native_case(
    manifest: str | Path,
    case: str,
    out_dir: str | Path,
    *,
    margin_mm: float,
    oars: Sequence[str] | str = "all",
) -> Path:
    """The native-grid arm of one case: each pair's masks as drawn, on their own grid, cropped
    to the union of both masks plus `margin_mm` (as the voxelized masks are), with pairs.csv
    (spacing "native"). An observer who drew nothing gets an empty mask on the other's grid."""
    rows = case_rows(manifest, case, oars)
    out_dir = Path(out_dir)
    records = []
    for row in rows.to_dict("records"):
        loaded = read_mask_pair(row)
        grid = loaded["a"] if loaded["a"] is not None else loaded["b"]
        spacing, origin = grid[1], grid[2]
        masks = [
            item[0] if item is not None else np.zeros_like(grid[0]) for item in loaded.values()
        ]
        box = _crop_box(masks, spacing, margin_mm)
        corner = [o + start * s for o, (start, _), s in zip(origin, box, spacing, strict=True)]
        voxel_mm3 = float(np.prod(spacing))
        record = {"case": case, "oar": row["oar"], "category": row["category"], "spacing": NATIVE}
        for observer, mask in zip("AB", masks, strict=True):
            cropped = mask[tuple(slice(start, stop) for start, stop in box)]
            write_mask(out_dir / f"{row['oar']}__{observer}.nii.gz", cropped, spacing, corner)
            record[f"path_{observer.lower()}"] = f"{row['oar']}__{observer}.nii.gz"
            record[f"volume_{observer.lower()}_mm3"] = round(float(cropped.sum()) * voxel_mm3, 3)
        records.append(record)
    out_dir.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(records, columns=list(PAIR_COLUMNS)).to_csv(out_dir / "pairs.csv", index=False)
    return out_dir / "pairs.csv"


def _crop_box(masks, spacing, margin_mm: float) -> list[tuple[int, int]]:
    """Index ranges [start, stop) of the union of the masks' voxels plus margin_mm per side,
    within the array; the whole array when both are empty."""
    union = np.logical_or(*masks)
    if not union.any():
        return [(0, n) for n in union.shape]
    box = []
    for axis, step in enumerate(spacing):
        hits = np.flatnonzero(union.any(axis=tuple(i for i in range(union.ndim) if i != axis)))
        pad = int(np.ceil(margin_mm / step - 1e-9))
        box.append((max(hits[0] - pad, 0), min(hits[-1] + 1 + pad, union.shape[axis])))
    return box


def build_hanseg_manifest(
    observer_a: str | Path, observer_b: str | Path, out_csv: str | Path, *, overwrite: bool = False
) -> pd.DataFrame:
    """Pair manifest of two HaN-Seg-style folders (one per observer) as CSV at `out_csv`.

    An OAR present for only one observer gets an empty path for the other. Paths are written
    relative to the CSV when possible. An existing CSV is kept unless `overwrite`; the CSV is
    written whole (`replace_whole`), so a call that fails or is killed leaves the old one or
    none.
    """
    out_csv = Path(out_csv)
    if out_csv.exists() and not overwrite:
        raise InputError(f"{out_csv}: exists; refusing to overwrite it")
    found: dict[tuple[str, str], dict[str, Path]] = {}
    for observer, root in (("a", Path(observer_a)), ("b", Path(observer_b))):
        if not root.is_dir():
            raise InputError(f"{root}: observer folder not found")
        for file in sorted(root.glob("case_*/case_*_OAR_*.seg.nrrd")):
            match = HANSEG_FILE.match(file.name)
            if match is None or match.group(1) != file.parent.name:
                continue
            found.setdefault((match.group(1), match.group(2)), {})[observer] = file
    if not found:
        raise InputError(
            f"{observer_a}, {observer_b}: no case_XX/case_XX_OAR_<Name>.seg.nrrd files found"
        )
    unknown = sorted({oar for _, oar in found if oar not in OARS})
    if unknown:
        raise InputError(f"{observer_a}, {observer_b}: unknown OAR name(s) {unknown}")
    base = out_csv.parent.resolve()

    def relative(file: Path | None) -> str:
        if file is None:
            return ""
        file = file.resolve()
        return str(file.relative_to(base)) if file.is_relative_to(base) else str(file)

    table = pd.DataFrame(
        [
            {
                "case": case,
                "oar": oar,
                "path_a": relative(files.get("a")),
                "path_b": relative(files.get("b")),
            }
            for (case, oar), files in sorted(found.items())
        ]
    )
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    # Whole or not at all: a half-written CSV would be refused ("exists") by the next call.
    replace_whole(out_csv, lambda part: table.to_csv(part, index=False))
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Build a pair manifest from HaN-Seg folders.")
    sub = parser.add_subparsers(dest="command", required=True)
    hanseg = sub.add_parser("hanseg", help="list two observers' HaN-Seg-style folders")
    hanseg.add_argument("observer_a")
    hanseg.add_argument("observer_b")
    hanseg.add_argument("out_csv")
    hanseg.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    try:
        table = build_hanseg_manifest(
            args.observer_a, args.observer_b, args.out_csv, overwrite=args.overwrite
        )
    except InputError as error:
        parser.exit(2, f"error: {error}\n")
    print(f"{args.out_csv}: {len(table)} pairs in {table['case'].nunique()} cases")


if __name__ == "__main__":
    main()
