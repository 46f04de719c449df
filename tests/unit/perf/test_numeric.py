import numpy as np

from clusterplan.perf import numeric


def test_floats_stay_floats_and_arrays_go_to_numpy():
    """Each helper gives a float's answer for floats and numpy's, element by element, for arrays."""
    values = np.array([-1.5, 0.0, 2.0, 7.25])
    cases = [
        (numeric.maximum, (values, 1.0)), (numeric.minimum, (values, 1.0)), (numeric.clip, (values, 0.0, 3.0)),
        (numeric.ceil, (values,)), (numeric.where, (values > 0, values, -values)),
        (numeric.divide_or_zero, (np.ones(4), values)), (numeric.full_like, (values, 3.0)),
        (numeric.as_float, (values,)),
    ]
    for function, args in cases:
        many = function(*args)
        assert isinstance(many, np.ndarray)
        for index in range(len(values)):
            one = function(*(a[index].item() if isinstance(a, np.ndarray) else a for a in args))
            assert not isinstance(one, np.generic) and one == many[index], function.__name__


def test_clip_lets_the_high_bound_win_as_numpy_does():
    """clip(5, 4, 2) is 2, as np.clip."""
    assert numeric.clip(5, 4, 2) == np.clip(5, 4, 2) == 2
