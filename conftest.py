"""Doctests print numpy scalars as numpy 1.x does (``3``, not ``np.int64(3)``), so they pass on numpy 1.2x and 2.x."""

import numpy as np

if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
    np.set_printoptions(legacy="1.25")
