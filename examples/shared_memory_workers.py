"""Sharing batches between your own processes with vecspaces' shared-memory functions.

``create_shared_memory(space, n, ctx)`` lays out one buffer for ``n`` values of ``space``;
``write_to_shared_memory(space, index, value, memory)`` fills slot ``index`` (from any process that was given
the memory when it started), and ``read_from_shared_memory(space, memory, n)`` returns the whole batch: array
leaves as zero-copy views, Text leaves decoded at every read.

Here three worker processes (started with ``spawn``, the strictest start method) each render a frame, an
image and a caption, into their slot every round, and the main process reads the batch once all have
written. Two barriers keep the rounds apart: the workers wait until the main process has read a round before
they overwrite it.

When to use this instead of ``AsyncVectorEnv``: ``AsyncVectorEnv`` already does all of this for environments
(with actions, rewards, autoreset, infos, timeouts and crash handling). Use the functions directly when your
processes are not environments, for example renderers, data loaders or simulators feeding a learner, or when
you need another schedule than "step all, then wait for all", such as producers that write at their own pace
or several readers of one batch.

Run it with ``python examples/shared_memory_workers.py``; it needs nothing but vecspaces.
"""

from __future__ import annotations

import multiprocessing
import textwrap
from typing import Any

import numpy as np

from vecspaces.error import InvalidValueError
from vecspaces.spaces import Box, Dict, Text
from vecspaces.vector.utils import create_shared_memory, read_from_shared_memory, write_to_shared_memory

NUM_WORKERS = 3
NUM_ROUNDS = 4
BARRIER_TIMEOUT = 60.0  # seconds; a worker that dies makes the main process fail instead of waiting forever

SPACE = Dict(
    image=Box(0, 255, (16, 16, 3), np.uint8),
    caption=Text(32, charset="abcdefghijklmnopqrstuvwxyz0123456789 "),
)


def render(worker: int, round_: int) -> dict[str, Any]:
    """The frame worker ``worker`` produces in round ``round_``: a flat-coloured image and its caption."""
    image = np.full((16, 16, 3), (40 * worker + 10 * round_) % 256, dtype=np.uint8)
    return {"image": image, "caption": f"worker {worker} frame {round_}"}


def worker(index: int, memory: Any, written: Any, read: Any) -> None:
    """Write one frame per round into slot ``index``; wait for the main process to read it before the next."""
    for round_ in range(NUM_ROUNDS):
        write_to_shared_memory(SPACE, index, render(index, round_), memory)
        written.wait(BARRIER_TIMEOUT)
        read.wait(BARRIER_TIMEOUT)


def heading(number: int, title: str) -> None:
    print(f"\n{number}. {title}\n{'-' * (len(title) + 3)}")


def show_layout(memory: Any) -> None:
    heading(1, f"The shared layout: one region per leaf, {NUM_WORKERS} values in each")
    for slot in memory.layout.slots:
        print(f"   {slot.path[0]:<8} {slot.dtype!s:<6} {slot.shape!s:<12} at byte {slot.offset}")
    print(f"   {memory.layout.nbytes} bytes in one buffer; Text is stored as character indices")


def exchange_frames(memory: Any, ctx: Any) -> bool:
    """Run the workers for every round; return whether every frame read equals the one written."""
    heading(2, f"{NUM_WORKERS} spawned workers write, the main process reads")
    written, read = ctx.Barrier(NUM_WORKERS + 1), ctx.Barrier(NUM_WORKERS + 1)
    processes = [ctx.Process(target=worker, args=(i, memory, written, read)) for i in range(NUM_WORKERS)]
    for process in processes:
        process.start()
    intact = True
    try:
        for round_ in range(NUM_ROUNDS):
            written.wait(BARRIER_TIMEOUT)
            batch = read_from_shared_memory(SPACE, memory, n=NUM_WORKERS)
            expected = [render(i, round_) for i in range(NUM_WORKERS)]
            intact &= all(
                batch["caption"][i] == frame["caption"] and np.array_equal(batch["image"][i], frame["image"])
                for i, frame in enumerate(expected)
            )
            levels = [int(batch["image"][i, 0, 0, 0]) for i in range(NUM_WORKERS)]
            print(f"   round {round_}: captions {list(batch['caption'])}, image levels {levels}")
            read.wait(BARRIER_TIMEOUT)
    finally:
        for process in processes:
            process.join(BARRIER_TIMEOUT)
    print(f"   every frame arrived intact: {intact}")
    return intact


def show_bad_write(memory: Any) -> None:
    heading(3, "A bad write is refused before anything is copied")
    before = read_from_shared_memory(SPACE, memory, n=NUM_WORKERS)["caption"][0]
    try:
        write_to_shared_memory(SPACE, 0, {"image": np.zeros((8, 8, 3), np.uint8), "caption": "too small"}, memory)
    except InvalidValueError as error:
        text = f"{type(error).__name__}: {error}"
        print(textwrap.fill(text, width=100, initial_indent="   ", subsequent_indent="     "))
    after = read_from_shared_memory(SPACE, memory, n=NUM_WORKERS)["caption"][0]
    print(f"   slot 0 unchanged: {before == after}")


def main() -> None:
    print("vecspaces shared memory between your own processes")
    print("===================================================")
    ctx = multiprocessing.get_context("spawn")
    memory = create_shared_memory(SPACE, n=NUM_WORKERS, ctx=ctx)
    show_layout(memory)
    intact = exchange_frames(memory, ctx)
    show_bad_write(memory)
    if not intact:
        raise SystemExit("some frames were not read back as written")


if __name__ == "__main__":
    main()
