"""Implementations of the operations: one module per kind of space, plus what several kinds share.

A kind's module is that space's row of the operation x space table (flatten family, batching family,
shared-memory layout, Gymnasium converter); ``container`` is Dict's and Tuple's row (its ``concatenate`` in
``container_concatenate``). ``custom`` is the custom-space row, ``arrays`` what the kinds whose
value is one array share, ``support`` reads the whole table back from the registries.

Importing this package imports every module in it, which registers them all; the package root ``vecspaces``
does so. The modules are found in the package's directory, so a new kind's kernel module needs no line here.
"""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
