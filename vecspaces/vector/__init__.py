"""Vector environments and their utilities."""

from vecspaces.vector import utils

__all__ = ["utils"]
