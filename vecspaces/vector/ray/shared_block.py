"""A step's observations through shared memory, for an agent on the driver's node.

The observations are most of a plain step's answer (225 KB for 8 Atari frames), and over a socket they cost two
copies through the kernel and, past the socket's buffer, several wake-ups of both ends. An agent on the driver's
node writes them instead into a block of memory that both map, a file in ``/dev/shm``, and its socket carries the
rest of the answer (rewards and flags: a few bytes). The driver creates the file; the agent maps it when it opens
its socket; the driver then removes its name, so nothing is left behind whatever becomes of either process.

Only the answer to a Gymnasium-style ``step`` goes this way: the driver never has two of those pending with one
agent, so the agent cannot overwrite observations the driver has not read yet (pool mode may queue several
commands, whose answers therefore take the socket).
"""

from __future__ import annotations

import contextlib
import math
import mmap
import os
import secrets
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["SharedBlock"]

SHM_DIRECTORY = "/dev/shm"


class SharedBlock:
    """A file in ``/dev/shm`` mapped into this process.

    Args:
        path: the file.
        size: its size in bytes.
        create: create the file (it must not exist), or map an existing one.
    """

    def __init__(self, path: str, size: int, create: bool) -> None:
        flags = os.O_RDWR | (os.O_CREAT | os.O_EXCL if create else 0)
        descriptor = os.open(path, flags, 0o600)
        try:
            if create:
                # Reserved now, so that a full /dev/shm (64 MB in a default Docker container) fails here, with
                # ENOSPC, rather than as a SIGBUS in the agent when it first writes a page.
                os.posix_fallocate(descriptor, 0, size)
            self.memory = mmap.mmap(descriptor, size)
        except BaseException:
            if create:
                os.unlink(path)
            raise
        finally:
            os.close(descriptor)
        self.path = path

    @classmethod
    def create(cls, size: int) -> SharedBlock | None:
        """A new block of ``size`` bytes under a random name; None where there is no ``/dev/shm`` or no room in it.

        Example:
            >>> block = SharedBlock.create(16)
            >>> block.array(np.dtype(np.int32), (2, 2)).shape
            (2, 2)
            >>> block.unlink(); block.close()
        """
        if size <= 0 or not os.path.isdir(SHM_DIRECTORY):
            return None
        try:
            return cls(os.path.join(SHM_DIRECTORY, f"vecspaces-{secrets.token_hex(8)}"), size, create=True)
        except OSError:
            return None

    def array(self, dtype: np.dtype[Any], shape: tuple[int, ...]) -> npt.NDArray[Any]:
        """The block's first bytes as an array."""
        return np.frombuffer(self.memory, dtype, math.prod(shape)).reshape(shape)

    def unlink(self) -> None:
        """Remove the file's name (the mappings stay valid until closed)."""
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)

    def close(self) -> None:
        """Unmap the block, unless arrays of it still live (it is then unmapped with the last of them)."""
        with contextlib.suppress(BufferError):
            self.memory.close()
