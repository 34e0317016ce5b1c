"""Placeholder: being written."""


def from_gymnasium(space):  # type: ignore[no-untyped-def]
    """Placeholder."""
    raise NotImplementedError


def to_gymnasium(space):  # type: ignore[no-untyped-def]
    """Placeholder."""
    raise NotImplementedError
