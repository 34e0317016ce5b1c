"""Gymnasium interop: Gymnasium-facing vector envs, ``make_vec``, and vecspaces envs as ``gymnasium.Env``.

Importing this package imports gymnasium (install it with ``pip install "vecspaces[gymnasium]"``); the rest of
vecspaces never needs it.
"""

from vecspaces.gymnasium.env import as_gymnasium_env
from vecspaces.vector.make import make_vec, register_vector_entry_point

__all__ = ["as_gymnasium_env", "make_vec", "register_vector_entry_point"]
