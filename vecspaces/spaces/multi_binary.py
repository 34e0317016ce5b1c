"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class MultiBinary(Space):  # type: ignore[type-arg]
    """Placeholder."""
