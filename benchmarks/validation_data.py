"""Where the validation data lies: the shared folder beside the checkout (searched upwards from it, so that a
checkout in a sub-folder finds it too) and the project's own additions under benchmarks/data/validation/."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
PROJECT = HERE / "data" / "validation"


def shared() -> Path:
    """shared/data/validation in the nearest folder above this checkout that has one."""
    for parent in HERE.parents:
        candidate = parent / "shared" / "data" / "validation"
        if candidate.is_dir():
            return candidate
    return HERE.parents[1] / "shared" / "data" / "validation"
