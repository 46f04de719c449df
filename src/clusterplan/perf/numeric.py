"""The few operations the step model needs beyond + - x /, for floats and numpy arrays alike.

One formula prices one layout (Python floats, tens of nanoseconds an operation) and a search
over thousands (numpy arrays, one entry per layout). numpy on a one-element array costs about a
microsecond an operation, so each helper keeps floats as floats and hands arrays to numpy; the
values are the same IEEE operations either way.
"""

from __future__ import annotations

import math

import numpy as np


def is_array(*values) -> bool:
    for value in values:
        if type(value) is np.ndarray:
            return True
    return False


def as_float(value):
    return value.astype(float) if type(value) is np.ndarray else float(value)


def maximum(a, b):
    if type(a) is np.ndarray or type(b) is np.ndarray:
        return np.maximum(a, b)
    return a if a >= b else b


def minimum(a, b):
    if type(a) is np.ndarray or type(b) is np.ndarray:
        return np.minimum(a, b)
    return a if a <= b else b


def clip(value, low, high):
    """``value`` within [low, high] (numpy's clip: the high bound wins where low > high)."""
    if type(value) is np.ndarray or type(low) is np.ndarray or type(high) is np.ndarray:
        return np.clip(value, low, high)
    value = value if value >= low else low
    return value if value <= high else high


def ceil(value):
    return np.ceil(value) if type(value) is np.ndarray else float(math.ceil(value))


def where(condition, then, otherwise):
    """``then`` where ``condition`` holds, else ``otherwise`` (numpy's where for arrays)."""
    if type(condition) is np.ndarray:
        return np.where(condition, then, otherwise)
    return then if condition else otherwise


def choose(condition, then, otherwise):
    """``then()`` where ``condition`` holds, else ``otherwise()``: for one layout only the one it needs is
    computed (a collective can cost microseconds), for arrays both, as numpy's where."""
    if type(condition) is np.ndarray:
        return np.where(condition, then(), otherwise())
    return then() if condition else otherwise()


def divide_or_zero(numerator, denominator):
    """numerator / denominator, 0 where the denominator is not positive."""
    if type(denominator) is np.ndarray:
        numerator = np.broadcast_to(numerator, denominator.shape)
        return np.divide(numerator, denominator, out=np.zeros_like(denominator), where=denominator > 0)
    return numerator / denominator if denominator > 0 else 0.0


def full_like(value, fill: float):
    """``fill`` in the shape of ``value``: an array, or a float."""
    return np.full_like(value, fill, dtype=float) if type(value) is np.ndarray else float(fill)
