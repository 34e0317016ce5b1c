"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Text(Space):  # type: ignore[type-arg]
    """Placeholder."""
