"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Sequence(Space):  # type: ignore[type-arg]
    """Placeholder."""
