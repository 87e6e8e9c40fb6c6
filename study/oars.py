"""The 30 organs-at-risk (OARs) of the HaN-Seg dataset and their volume categories.

Categories follow the study (median volume V over cases): small V <= 1e3 mm^3,
midsize 1e3 < V <= 1e4 mm^3, large V > 1e4 mm^3; the two carotid arteries form the fourth
category, tubular, whatever their volume.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from types import MappingProxyType

CATEGORIES: tuple[str, ...] = ("small", "midsize", "large", "tubular")

NODULE_DIAMETERS_MM: tuple[float, float] = (6.0, 10.0)
"""Lung nodules are sized by diameter, not by organ volume: the classes of their
equivalent-sphere diameter d = (6 V / pi)^(1/3) are below 6 mm, 6 to 10 mm, 10 mm or more."""

NODULE_CATEGORIES: tuple[str, ...] = ("<6 mm", "6–10 mm", "≥10 mm")
"""The nodule size classes of `NODULE_DIAMETERS_MM`, smallest first (`nodule_category`)."""

KNOWN_CATEGORIES: tuple[str, ...] = CATEGORIES + NODULE_CATEGORIES
"""Every category a pair manifest may name: the organs' four and the nodules' three."""


def ordered_categories(present: Iterable[str]) -> list[str]:
    """The categories in `present`: the study's four in CATEGORIES order, the nodule classes
    in NODULE_CATEGORIES order, then others sorted (a user's own manifest may name its own)."""
    present = set(present)
    return [c for c in KNOWN_CATEGORIES if c in present] + sorted(present - set(KNOWN_CATEGORIES))


def category_phrase(category: str) -> str:
    """A category as a noun phrase: "small OARs", "<6 mm nodules", or a user's own name."""
    if category in CATEGORIES:
        return f"{category} OARs"
    if category in NODULE_CATEGORIES:
        return f"{category} nodules"
    return str(category)


def equivalent_diameter(volume_mm3: float) -> float:
    """The diameter in mm of the sphere of the given volume: (6 V / pi)^(1/3)."""
    return float((6.0 * volume_mm3 / math.pi) ** (1.0 / 3.0))


def nodule_category(volume_mm3: float) -> str:
    """A nodule's size class (`NODULE_CATEGORIES`) from its volume in mm^3, by the
    equivalent-sphere diameter."""
    if not volume_mm3 >= 0:  # also rejects NaN
        raise ValueError(f"volume must be a non-negative number of mm^3, got {volume_mm3!r}")
    diameter = equivalent_diameter(volume_mm3)
    below = sum(diameter >= limit for limit in NODULE_DIAMETERS_MM)
    return NODULE_CATEGORIES[below]


SMALL_MAX_MM3 = 1e3
MIDSIZE_MAX_MM3 = 1e4

OARS: Mapping[str, str] = MappingProxyType(
    {
        "A_Carotid_L": "tubular",
        "A_Carotid_R": "tubular",
        "Arytenoid": "small",
        "Bone_Mandible": "large",
        "Brainstem": "large",
        "BuccalMucosa": "midsize",
        "Cavity_Oral": "large",
        "Cochlea_L": "small",
        "Cochlea_R": "small",
        "Cricopharyngeus": "midsize",
        "Esophagus_S": "midsize",
        "Eye_AL": "small",
        "Eye_AR": "small",
        "Eye_PL": "midsize",
        "Eye_PR": "midsize",
        "Glnd_Lacrimal_L": "small",
        "Glnd_Lacrimal_R": "small",
        "Glnd_Submand_L": "midsize",
        "Glnd_Submand_R": "midsize",
        "Glnd_Thyroid": "large",
        "Glottis": "midsize",
        "Larynx_SG": "large",
        "Lips": "midsize",
        "OpticChiasm": "small",
        "OpticNrv_L": "small",
        "OpticNrv_R": "small",
        "Parotid_L": "large",
        "Parotid_R": "large",
        "Pituitary": "small",
        "SpinalCord": "large",
    }
)
"""OAR name -> category, in HaN-Seg's alphabetical label order (read-only)."""


def category_of_volume(volume_mm3: float) -> str:
    """Volume category of a (median) volume in mm^3: small, midsize or large.

    Tubular is a category by anatomy, not by volume, so it is never returned here.
    """
    if not volume_mm3 >= 0:  # also rejects NaN
        raise ValueError(f"volume must be a non-negative number of mm^3, got {volume_mm3!r}")
    if volume_mm3 <= SMALL_MAX_MM3:
        return "small"
    if volume_mm3 <= MIDSIZE_MAX_MM3:
        return "midsize"
    return "large"


def check_oar_names(names: Iterable[str], *, where: str = "OAR list") -> list[str]:
    """Return `names` as a list, or raise ValueError naming every unknown OAR and `where`."""
    names = list(names)
    unknown = [name for name in names if name not in OARS]
    if unknown:
        raise ValueError(
            f"{where}: unknown OAR name(s) {', '.join(map(repr, unknown))}; "
            f"known names are the 30 HaN-Seg OARs: {', '.join(OARS)}"
        )
    return names


def selected_oars(chosen: str | Iterable[str]) -> list[str]:
    """The OARs a study keeps (`dataset.oars`: "all" or a list of names), in HaN-Seg order."""
    chosen = set(OARS) if chosen == "all" else set(chosen)
    return [name for name in OARS if name in chosen]


def first_of_each_category(
    oars: Iterable[str], categories: Iterable[str], per_category: int
) -> list[str]:
    """The first `per_category` distinct OARs of each category, in the order given, categories
    in `ordered_categories` order (a study's documented subset of every category)."""
    firsts: dict[str, list[str]] = {}
    for oar, category in zip(oars, categories, strict=True):
        chosen = firsts.setdefault(category, [])
        if oar not in chosen and len(chosen) < per_category:
            chosen.append(oar)
    return [oar for category in ordered_categories(firsts) for oar in firsts[category]]
