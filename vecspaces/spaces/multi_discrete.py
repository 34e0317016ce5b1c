"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class MultiDiscrete(Space):  # type: ignore[type-arg]
    """Placeholder."""
