"""``singledispatch`` with a faster call: the same function object API, one dict lookup per call.

``functools.singledispatch`` looks an implementation up in a ``WeakKeyDictionary`` at every call, which costs
about as much as a small kernel itself. The batching family is called per step (``iterate`` on every action
batch, ``concatenate`` on every observation batch), so its declarations use this wrapper instead: it keeps
the ``functools`` function underneath (``register``, ``dispatch``, ``registry`` behave exactly as
Gymnasium users expect) and caches the implementation per class in a plain dict, cleared on every
``register``, and, as ``functools`` does, whenever the ABC registry changes once an ABC has been registered.
:func:`lookup` gives composite kernels the same cached lookup for their children.
"""

from __future__ import annotations

import functools
from abc import get_cache_token
from collections.abc import Callable
from types import UnionType
from typing import Any, TypeVar

__all__ = ["lookup", "singledispatch"]

R = TypeVar("R")


def singledispatch(function: Callable[..., R]) -> functools._SingleDispatchCallable[R]:
    """Like :func:`functools.singledispatch`, with a faster call.

    Example:
        >>> @singledispatch
        ... def kind(value: object) -> str:
        ...     return "object"
        >>> @kind.register(int)
        ... def _(value: int) -> str:
        ...     return "int"
        >>> kind(1), kind("a"), kind.dispatch(bool).__name__
        ('int', 'object', '_')
    """
    generic = functools.singledispatch(function)
    dispatch = generic.dispatch
    cache: dict[type, Callable[..., R]] = {}
    cache_token: object = None

    def call(*args: Any, **kwargs: Any) -> R:
        if cache_token is not None and get_cache_token() != cache_token:
            _clear_cache()
        if not args:
            raise TypeError(f"{function.__name__} requires at least 1 positional argument")
        cls = args[0].__class__
        try:
            implementation = cache[cls]
        except KeyError:
            implementation = cache[cls] = dispatch(cls)
        return implementation(*args, **kwargs)

    def lookup(cls: type) -> Callable[..., R]:
        if cache_token is not None and get_cache_token() != cache_token:
            _clear_cache()
        try:
            return cache[cls]
        except KeyError:
            implementation = cache[cls] = dispatch(cls)
            return implementation

    def register(cls: Any, func: Callable[..., Any] | None = None) -> Any:
        nonlocal cache_token
        if func is None and isinstance(cls, (type, UnionType)):
            return lambda func: register(cls, func)  # used as @register(cls): clear the cache once registered
        registered = generic.register(cls, func)
        if cache_token is None and any(hasattr(kind, "__abstractmethods__") for kind in generic.registry):
            cache_token = get_cache_token()
        cache.clear()
        return registered

    def _clear_cache() -> None:
        nonlocal cache_token
        cache.clear()
        generic._clear_cache()
        if cache_token is not None:
            cache_token = get_cache_token()

    functools.update_wrapper(call, generic)  # copies the docstring and the dispatch, registry... attributes
    call.register = register  # type: ignore[attr-defined]
    call._clear_cache = _clear_cache  # type: ignore[attr-defined]
    call.lookup = lookup  # type: ignore[attr-defined]
    return call  # type: ignore[return-value]


def lookup(function: Any) -> Callable[[type], Callable[..., Any]]:
    """The implementation finder of ``function``: ``find(cls)`` is ``function.dispatch(cls)``, from the cache.

    Composite kernels call their children's implementations through it, which is faster than calling
    ``function`` itself and always up to date with registrations.

    Example:
        >>> @singledispatch
        ... def kind(value: object) -> str:
        ...     return "object"
        >>> lookup(kind)(int)(1)
        'object'
    """
    return getattr(function, "lookup", function.dispatch)
