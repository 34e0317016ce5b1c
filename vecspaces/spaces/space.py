"""The :class:`Space` base class, under the path Gymnasium gives it (``gymnasium.spaces.space``).

It is defined in ``vecspaces._space``, below the concrete spaces: a module inside this package cannot be
imported without running ``vecspaces/spaces/__init__.py``, which imports every concrete space, so the
operations' declarations (``vecspaces._ops``), which the concrete spaces use, import the base class from there.
"""

from vecspaces._space import MaskNDArray, Space, derive_seeds, make_rng

__all__ = ["MaskNDArray", "Space", "derive_seeds", "make_rng"]
