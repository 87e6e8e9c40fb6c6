"""The set-up files agree: one list of pinned packages, whichever installer a user picks."""

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def pinned(lines) -> list[str]:
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_conda_environment_pins_what_requirements_pin():
    environment = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(
        item["pip"] for item in environment["dependencies"] if isinstance(item, dict)
    )
    assert pip_section == pinned((REPO / "requirements.txt").read_text().splitlines())
    assert "python=3.11" in environment["dependencies"]


def test_every_requirement_is_pinned_exactly_and_agrees_with_the_constraints():
    constraints = {}
    for line in pinned((REPO / "constraints.txt").read_text().splitlines()):
        name, version = line.split("==")
        constraints[name.lower().replace("_", "-")] = version
    for line in pinned((REPO / "requirements.txt").read_text().splitlines()):
        name, _, version = line.partition("==")
        assert version, f"{line!r} is not pinned with =="
        key = name.lower().replace("_", "-")
        if key != "torch":  # torch's build tag (+cpu) is left to the installer
            assert constraints[key] == version, name
