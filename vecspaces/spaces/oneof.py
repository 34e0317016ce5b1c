"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class OneOf(Space):  # type: ignore[type-arg]
    """Placeholder."""
