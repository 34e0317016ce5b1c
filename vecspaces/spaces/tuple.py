"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Tuple(Space):  # type: ignore[type-arg]
    """Placeholder."""
