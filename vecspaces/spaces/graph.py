"""Placeholder: being written."""

from vecspaces.spaces.space import Space


class Graph(Space):  # type: ignore[type-arg]
    """Placeholder."""


from vecspaces.spaces.space import Space

GraphInstance = None
