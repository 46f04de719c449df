"""The exit codes of every command (README, DESIGN: 0 ok, 1 failure, 2 bad input, 3 infeasible)."""

from __future__ import annotations

import enum


class Exit(enum.IntEnum):
    OK = 0
    FAILURE = 1
    BAD_INPUT = 2
    INFEASIBLE = 3
