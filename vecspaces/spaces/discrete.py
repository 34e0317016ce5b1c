"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Discrete(Space):  # type: ignore[type-arg]
    """Placeholder."""
