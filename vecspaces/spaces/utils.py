"""The flatten family of space utilities.

The family is ``flatdim``, ``flatten_space``, ``flatten``, ``unflatten`` and ``is_space_dtype_shape_equiv``.

These are ``functools.singledispatch`` functions: register an implementation for your own space with
``flatten.register(MySpace)``. The implementations for the built-in spaces are in ``vecspaces._kernels``.
"""

from vecspaces._ops.flatten import flatdim, flatten, flatten_space, is_space_dtype_shape_equiv, unflatten

__all__ = ["flatdim", "flatten", "flatten_space", "is_space_dtype_shape_equiv", "unflatten"]
