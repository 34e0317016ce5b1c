"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Box(Space):  # type: ignore[type-arg]
    """Placeholder."""
