"""Where ``vecspaces.gymnasium`` imports the space conversion from; it lives in ``vecspaces._ops.gymnasium``.

Kept until ``vecspaces/gymnasium/env.py`` imports ``convert_to_gymnasium`` from ``vecspaces._ops.gymnasium``;
then this module goes.
"""

from vecspaces._ops.gymnasium import convert_to_gymnasium

__all__ = ["convert_to_gymnasium"]
