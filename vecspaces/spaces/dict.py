"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Dict(Space):  # type: ignore[type-arg]
    """Placeholder."""
