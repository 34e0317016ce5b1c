"""vecspaces: Gymnasium-compatible spaces, vector utilities and a fast, hang-free worker pool.

``vecspaces.spaces`` and ``vecspaces.vector`` are drop-in replacements for ``gymnasium.spaces`` and
``gymnasium.vector``.

The package is a strict stack of layers, each importing only the ones below it (``tests/test_architecture.py``
checks it): ``error``; the space base class and the operations' declarations (``_space``, ``_ops``); the
concrete spaces (``spaces``); their kernels (``_kernels``, registered by the import below); ``vector``; the
Gymnasium interop (``gymnasium``, imported only by its users).
"""

import vecspaces._kernels  # noqa: F401  (registers every kind's implementations of the operations)
from vecspaces import error, spaces, vector
from vecspaces.env import Env
from vecspaces.spaces import *  # noqa: F403  (the space classes, and the rest of vecspaces.spaces.__all__)
from vecspaces.vector.make import make_vec

__version__ = "0.1.0"

__all__ = ["Env", "__version__", "error", "make_vec", "spaces", "vector"]
__all__ += spaces.__all__
