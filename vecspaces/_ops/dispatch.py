"""``singledispatch`` with a faster call: the same function object API, one dict lookup per call.

``functools.singledispatch`` looks an implementation up in a ``WeakKeyDictionary`` at every call, which costs
about as much as a small kernel itself. The batching family is called per step (``iterate`` on every action
batch, ``concatenate`` on every observation batch), so its declarations use this wrapper instead: it keeps
the ``functools`` function underneath (``register``, ``dispatch``, ``registry`` behave exactly as
Gymnasium users expect) and caches the implementation per class in a plain dict, cleared on every
``register``, and, as ``functools`` does, whenever the ABC registry changes once an ABC has been registered.
:func:`lookup` gives composite kernels the same cached lookup for their children.

A Gymnasium space given to an operation finds no implementation of its own (its class is Gymnasium's), so the
lookup would fall through to the declaration's default, which refuses it. Only then, once per class, the cache
gets a converting implementation instead (:func:`convert_gymnasium_arguments`): it converts every Gymnasium
space among the arguments with ``from_gymnasium`` and calls the operation again on vecspaces spaces, whose
results are vecspaces objects. Calls on vecspaces spaces never reach that code, and an implementation
registered for a Gymnasium class takes precedence. Gymnasium is never imported here: a class is Gymnasium's
only if ``gymnasium.spaces`` is already in ``sys.modules`` (``vecspaces._ops.gymnasium``).
"""

from __future__ import annotations

import functools
import inspect
from abc import get_cache_token
from collections.abc import Callable
from types import UnionType
from typing import Any, TypeVar

from vecspaces._ops.gymnasium import convert_from_gymnasium, is_gymnasium_space_class

__all__ = [
    "convert_gymnasium_arguments",
    "convert_if_gymnasium",
    "lookup",
    "singledispatch",
]

R = TypeVar("R")


# C901: one function of closures, so a call costs one dict lookup (its docstring says why not a class).
def singledispatch(function: Callable[..., R]) -> functools._SingleDispatchCallable[R]:  # noqa: C901
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
    # One function of closures over one cache (69 lines): a class would put an attribute lookup on every call,
    # which is the cost this wrapper exists to remove.
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
            implementation = cache[cls] = find(cls)
        return implementation(*args, **kwargs)

    def lookup(cls: type) -> Callable[..., R]:
        if cache_token is not None and get_cache_token() != cache_token:
            _clear_cache()
        try:
            return cache[cls]
        except KeyError:
            implementation = cache[cls] = find(cls)
            return implementation

    def find(cls: type) -> Callable[..., R]:
        implementation = dispatch(cls)
        # The default (registered for object) is what a class without an implementation gets; for a Gymnasium
        # space it would refuse the argument, so convert instead.
        if implementation is generic.registry[object] and is_gymnasium_space_class(cls):
            return convert_gymnasium_arguments(call, function)
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
    ``function`` itself and always up to date with registrations. For a Gymnasium space class with no
    implementation of its own, it finds the converting one (see the module docstring).

    Example:
        >>> @singledispatch
        ... def kind(value: object) -> str:
        ...     return "object"
        >>> lookup(kind)(int)(1)
        'object'
    """
    return getattr(function, "lookup", function.dispatch)


def convert_gymnasium_arguments(operation: Callable[..., R], declaration: Callable[..., Any]) -> Callable[..., R]:
    """An implementation of ``operation`` that converts its Gymnasium space arguments, then calls it again.

    Every argument that is a Gymnasium space is converted once with ``from_gymnasium`` (so
    ``is_space_dtype_shape_equiv`` converts both spaces); values are passed on unchanged. A custom Gymnasium
    kind raises :class:`~vecspaces.error.CustomSpaceError` naming the operation and the argument.

    Args:
        operation: the dispatching function, called again with the converted arguments.
        declaration: the declared function, whose name and parameter names the errors use.

    Returns:
        The implementation, to be cached for the Gymnasium class.

    Example:
        >>> import gymnasium
        >>> from vecspaces.spaces import flatdim
        >>> flatdim(gymnasium.spaces.Dict(a=gymnasium.spaces.Discrete(3), b=gymnasium.spaces.Box(0, 1, (2,))))
        5
    """
    name = declaration.__name__
    parameters = list(inspect.signature(declaration).parameters)

    def converting(*args: Any, **kwargs: Any) -> R:
        converted = [
            convert_if_gymnasium(value, name, parameters[index] if index < len(parameters) else f"args[{index}]")
            for index, value in enumerate(args)
        ]
        keywords = {key: convert_if_gymnasium(value, name, key) for key, value in kwargs.items()}
        return operation(*converted, **keywords)

    return converting


def convert_if_gymnasium(value: Any, operation: str, argument: str) -> Any:
    """``value`` converted with ``from_gymnasium`` if it is a Gymnasium space, else ``value`` itself.

    For the public entries that check their arguments before dispatching: call it where a non-space would be
    refused, so vecspaces spaces never pay for it.

    Args:
        value: an argument of ``operation``.
        operation: the operation's name, for errors.
        argument: the argument's name or place (``spaces[2]``), where an error's path starts.

    Raises:
        CustomSpaceError: ``value`` is (or holds) a custom Gymnasium space kind.

    Example:
        >>> import gymnasium
        >>> convert_if_gymnasium(gymnasium.spaces.Discrete(2), "create_empty_array", "space")
        Discrete(2)
        >>> convert_if_gymnasium("Discrete(2)", "create_empty_array", "space")
        'Discrete(2)'
    """
    if not is_gymnasium_space_class(type(value)):
        return value
    return convert_from_gymnasium(value, operation, argument)
