"""Loading and validating the study configuration (config.yaml).

The JSON Schema in workflow/schemas/config.schema.yaml states every key, its type and its
default (the metrics' keys and parameters from `vocabulary`, added as the schema is loaded);
`load_config` validates against it, fills in defaults, and then checks what a schema
cannot say well (finite numbers, known OAR names, a manifest that exists).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from adapters.environments import STUDY_ENVIRONMENT
from study.oars import check_oar_names
from study.records import REFERENCE, REFERENCE_VARIANTS
from vocabulary import METRIC_KEYS, PARAMETERS, TESTED_KEYS

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow/schemas/config.schema.yaml"


class ConfigError(ValueError):
    """A configuration value is missing, malformed or inconsistent; the message names the key."""


def load_schema() -> dict:
    """The config schema, with the metric vocabulary's facts in place (`_add_vocabulary`)."""
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        return _add_vocabulary(yaml.safe_load(handle))


def _add_vocabulary(schema: dict) -> dict:
    """The `metrics:` block's parameter defaults and descriptions, the scored keys' enum and
    default (the tested metrics), all owned by `vocabulary`."""
    block = schema["properties"]["metrics"]["properties"]
    for parameter in PARAMETERS:
        block[parameter.config_key].update(
            default=parameter.default, description=parameter.description
        )
    block["scored"].update(items={"enum": list(METRIC_KEYS)}, default=list(TESTED_KEYS))
    return schema


def _key_path(path) -> str:
    """['voxel_sizes', 2, 0] -> 'voxel_sizes[2][0]'."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "<top level>"


def _fill_defaults(instance: Any, schema: Mapping) -> None:
    """Insert the schema's `default` for every missing property, recursively (in place)."""
    if not isinstance(instance, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in instance and "default" in sub:
            instance[key] = copy.deepcopy(sub["default"])
        if key in instance:
            _fill_defaults(instance[key], sub)


def _read(source: str | Path | Mapping) -> tuple[dict, str]:
    if isinstance(source, Mapping):
        return copy.deepcopy(dict(source)), "config"
    path = Path(source)
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle)
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from error
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping of keys, got {type(data).__name__}")
    return data, str(path)


def _sizes(config: dict) -> list[tuple[str, list]]:
    """(key, values) of every voxel size and field-of-view size of a config (in mm), the
    grid check's own list included when it is one (not "coarsest" or "all")."""
    sizes = [(f"voxel_sizes[{i}]", size) for i, size in enumerate(config["voxel_sizes"])]
    sizes.append(("timing.voxel_size", config["timing"]["voxel_size"]))
    sizes.append(("field_of_view.scan_mm", config["field_of_view"]["scan_mm"]))
    if config["field_of_view"]["size_mm"] is not None:
        sizes.append(("field_of_view.size_mm", config["field_of_view"]["size_mm"]))
    if isinstance(config["grid_check"]["voxel_sizes"], list):
        sizes += [
            (f"grid_check.voxel_sizes[{i}]", size)
            for i, size in enumerate(config["grid_check"]["voxel_sizes"])
        ]
    return sizes


def _check_finite(config: dict, where: str) -> None:
    """JSON Schema lets NaN through (every comparison with NaN is false): reject it here."""
    for key, values in _sizes(config):
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise ConfigError(
                f"{where}: {key} must hold positive finite numbers (mm), got {values!r}"
            )
    for key in ("percentile", "tau_mm"):
        if not math.isfinite(config["metrics"][key]):
            raise ConfigError(
                f"{where}: metrics.{key} must be finite, got {config['metrics'][key]!r}"
            )
    if not math.isfinite(config["field_of_view"]["margin_mm"]):
        raise ConfigError(f"{where}: field_of_view.margin_mm must be finite")


def _check_consistency(config: dict, where: str) -> None:
    dataset = config["dataset"]
    if dataset["oars"] != "all":
        try:
            check_oar_names(dataset["oars"], where=f"{where}: dataset.oars")
        except ValueError as error:
            raise ConfigError(str(error)) from None
    if dataset["source"] == "manifest" and not dataset["manifest"]:
        raise ConfigError(
            f"{where}: dataset.manifest must name a CSV when dataset.source is 'manifest'"
        )
    if dataset["source"] == "synthetic" and dataset["native_grid"]:
        raise ConfigError(
            f"{where}: dataset.native_grid needs masks drawn on a grid of their own "
            "(source manifest or lidc); the synthetic organs are meshes"
        )
    fov = config["field_of_view"]
    if fov["policy"] == "fixed" and fov["size_mm"] is None:
        raise ConfigError(f"{where}: field_of_view.size_mm is required when policy is 'fixed'")
    # Every analysis compares with the reference itself; other meshings are extra variants.
    if REFERENCE_VARIANTS[REFERENCE] not in config["reference"]["meshings"]:
        raise ConfigError(
            f"{where}: reference.meshings must include "
            f"{REFERENCE_VARIANTS['reference']} (the reference itself)"
        )
    # The tables compare today's versions; another environment is scored beside them.
    if config["environments"][0] != STUDY_ENVIRONMENT:
        raise ConfigError(
            f"{where}: environments must start with {STUDY_ENVIRONMENT!r} (the tables are its "
            f"scores; other environments are compared with it), got {config['environments']}"
        )
    sizes = [tuple(map(float, s)) for s in config["voxel_sizes"]]
    if len(set(sizes)) != len(sizes):
        raise ConfigError(f"{where}: voxel_sizes lists a voxel size twice: {config['voxel_sizes']}")
    if tuple(map(float, config["timing"]["voxel_size"])) not in sizes:
        raise ConfigError(
            f"{where}: timing.voxel_size {config['timing']['voxel_size']} is not one of voxel_sizes"
        )
    for size in config["grid_check"]["voxel_sizes"]:
        if tuple(map(float, size)) not in sizes:
            raise ConfigError(
                f"{where}: grid_check.voxel_sizes: {size} is not one of "
                f"voxel_sizes {config['voxel_sizes']}"
            )


def _check_dimension(config: dict, where: str) -> None:
    """Every voxel size and field-of-view size has dataset.dimension entries (2 or 3); a 2D
    synthetic dataset is the 2D shapes, which dataset.oars cannot select."""
    dimension = config["dataset"]["dimension"]
    for key, values in _sizes(config):
        if len(values) != dimension:
            raise ConfigError(
                f"{where}: {key} has {len(values)} entries, but dataset.dimension is "
                f"{dimension}: give one size per axis ({dimension} numbers, mm)"
            )
    if dimension == 2 and config["dataset"]["source"] == "synthetic":
        if config["dataset"]["oars"] != "all":
            raise ConfigError(
                f"{where}: dataset.oars selects head-and-neck organs; a 2D synthetic dataset "
                "is the 2D shapes (study/dataset/shapes2d.py): leave dataset.oars out"
            )


def _resolve_grid_check(config: dict) -> None:
    """grid_check.voxel_sizes becomes a list: "coarsest" is the study's voxel size of largest
    volume (area in 2D; the first of equals), "all" every one."""
    check, sizes = config["grid_check"], config["voxel_sizes"]
    if check["voxel_sizes"] == "all":
        check["voxel_sizes"] = list(sizes)
    elif check["voxel_sizes"] == "coarsest":
        check["voxel_sizes"] = [max(sizes, key=math.prod)]


def _resolve_lidc(config: dict, where: str) -> None:
    """A lidc dataset's manifest is the one its writer puts in data/<name>/ (the workflow
    writes it at start-up, study.dataset.lidc)."""
    dataset = config["dataset"]
    if dataset["source"] != "lidc":
        return
    if dataset["manifest"]:
        raise ConfigError(
            f"{where}: dataset.manifest is written by the lidc source (data/<name>/pairs.csv); "
            "leave it out, or use source: manifest with your own CSV"
        )
    dataset["manifest"] = f"data/{dataset['name']}/pairs.csv"


def _resolve_tools(config: dict, where: str) -> None:
    """`tools: all` becomes the registry's study tools, `tools: paper` the paper's eleven;
    every name must be registered."""
    from adapters import PAPER_TOOLS, REGISTRY, STUDY_TOOLS

    groups = {"all": STUDY_TOOLS, "paper": PAPER_TOOLS}
    if isinstance(config["tools"], str):
        config["tools"] = list(groups[config["tools"]])
    for key in ("tools", "cross_checks"):
        unknown = [name for name in config[key] if name not in REGISTRY]
        if unknown:
            raise ConfigError(
                f"{where}: {key}: unknown tools {unknown}; registered: {', '.join(REGISTRY)}"
            )


def load_config(source: str | Path | Mapping) -> dict:
    """Validated configuration with defaults filled in, from a YAML path or a mapping.

    Raises ConfigError naming the file and the offending key.
    """
    config, where = _read(source)
    schema = load_schema()
    validator = jsonschema.Draft202012Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        error = errors[0]
        raise ConfigError(f"{where}: {_key_path(error.absolute_path)}: {error.message}")
    _fill_defaults(config, schema)
    _resolve_tools(config, where)
    _resolve_lidc(config, where)
    _check_dimension(config, where)
    _resolve_grid_check(config)
    _check_finite(config, where)
    _check_consistency(config, where)
    return config
