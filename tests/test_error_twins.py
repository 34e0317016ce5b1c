"""Our exceptions are Gymnasium's too once gymnasium is imported, and nothing changes without it.

A Gymnasium user who swaps the vector env import keeps ``except gymnasium.error.NoAsyncCallError`` (and
``pytest.raises(gymnasium.error.ClosedEnvironmentError)``, ``except gymnasium.error.Error``); ``except`` matches by
real inheritance only. This process has gymnasium imported; the tests of a process that never imports it run
in a subprocess.
"""

from __future__ import annotations

import copy
import functools
import multiprocessing
import pickle
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Callable
from typing import Any

import cloudpickle
import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import vecspaces.error as ve  # noqa: E402
from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv  # noqa: E402
from vecspaces.vector._async.protocol import capture_error, rebuild_error  # noqa: E402

# Every Error class we export, with the builtins it derives from (a new class must be added here).
BUILTIN_BASES: dict[type[ve.Error], tuple[type[BaseException], ...]] = {
    ve.Error: (Exception,),
    ve.InvalidValueError: (ValueError,),
    ve.InvalidTypeError: (TypeError,),
    ve.NotFlattenableError: (ValueError,),
    ve.CustomSpaceError: (TypeError,),
    ve.CustomSpaceNotImplementedError: (TypeError, NotImplementedError),
    ve.AlreadyPendingCallError: (RuntimeError,),
    ve.NoAsyncCallError: (RuntimeError,),
    ve.ClosedEnvironmentError: (RuntimeError,),
    ve.WorkerDiedError: (RuntimeError,),
    ve.WaitTimeoutError: (TimeoutError, multiprocessing.TimeoutError),
    ve.SpaceMismatchError: (RuntimeError,),
    ve.EpisodeEndedError: (RuntimeError,),
}
ERRORS = list(BUILTIN_BASES)

# Ours -> Gymnasium's class of the same name.
SAME_NAME = {
    ve.AlreadyPendingCallError: gymnasium.error.AlreadyPendingCallError,
    ve.NoAsyncCallError: gymnasium.error.NoAsyncCallError,
    ve.ClosedEnvironmentError: gymnasium.error.ClosedEnvironmentError,
    ve.CustomSpaceError: gymnasium.error.CustomSpaceError,
    ve.CustomSpaceNotImplementedError: gymnasium.error.CustomSpaceError,
}
NAMED = (ve.AlreadyPendingCallError, ve.NoAsyncCallError)  # their __init__ takes (msg, name)


def build(cls: type[ve.Error], text: str = "it broke") -> ve.Error:
    return cls(text, "step") if cls in NAMED else cls(text)


def ids(cls: type) -> str:
    return cls.__name__


def raised(error: BaseException) -> BaseException:
    """``error`` after a raise (with its traceback), as a handler gets it."""
    try:
        raise error
    except BaseException as caught:
        return caught


def test_every_exported_error_class_is_listed() -> None:
    exported = {getattr(ve, name) for name in ve.__all__}
    assert {item for item in exported if isinstance(item, type) and issubclass(item, ve.Error)} == set(ERRORS)
    assert not issubclass(ve.PerformanceWarning, gymnasium.error.Error)  # a warning, left alone


@pytest.mark.parametrize("cls", list(SAME_NAME), ids=ids)
def test_caught_by_gymnasiums_class_of_the_same_name(cls: type[ve.Error]) -> None:
    theirs = SAME_NAME[cls]
    try:
        raise build(cls)
    except theirs as caught:
        assert type(caught) is cls  # ours: the class itself derives from Gymnasium's, no twin class
        assert str(caught) == "it broke"
    with pytest.raises(cls, match="it broke"):
        raise build(cls)
    with pytest.raises(theirs, match="it broke"):
        raise build(cls)


@pytest.mark.parametrize("cls", ERRORS, ids=ids)
def test_caught_by_gymnasiums_error_and_by_its_builtins(cls: type[ve.Error]) -> None:
    for catch in (gymnasium.error.Error, ve.Error, cls, *BUILTIN_BASES[cls]):
        try:
            raise build(cls)
        except catch as caught:
            assert type(caught) is cls
            assert caught.args == ("it broke",)  # Gymnasium's __init__ is never used


@pytest.mark.parametrize("cls", [cls for cls in ERRORS if cls not in SAME_NAME], ids=ids)
def test_only_the_four_named_classes_derive_from_gymnasiums_of_that_name(cls: type[ve.Error]) -> None:
    gymnasium_classes = {item for item in vars(gymnasium.error).values() if isinstance(item, type)}
    assert [item for item in cls.__mro__ if item in gymnasium_classes] == [gymnasium.error.Error]


@pytest.mark.parametrize("cls", NAMED, ids=ids)
def test_name_is_kept(cls: type[ve.Error]) -> None:
    with pytest.raises(SAME_NAME[cls]) as caught:
        raise cls("reset_wait was called without a pending reset", "reset")
    assert caught.value.name == "reset"
    assert caught.value.args == ("reset_wait was called without a pending reset",)


def pickled(error: BaseException) -> BaseException:
    result: BaseException = pickle.loads(pickle.dumps(error))
    return result


def pickled_protocol_0(error: BaseException) -> BaseException:
    result: BaseException = pickle.loads(pickle.dumps(error, protocol=0))
    return result


def cloudpickled(error: BaseException) -> BaseException:
    result: BaseException = cloudpickle.loads(cloudpickle.dumps(error))
    return result


ROUND_TRIPS: list[Callable[[BaseException], BaseException]] = [
    pickled,
    pickled_protocol_0,
    cloudpickled,
    copy.copy,
    copy.deepcopy,
]


@pytest.mark.parametrize("round_trip", ROUND_TRIPS, ids=lambda function: function.__name__)
@pytest.mark.parametrize("cls", ERRORS, ids=ids)
def test_round_trips_keep_type_message_name_and_notes(
    cls: type[ve.Error], round_trip: Callable[[BaseException], BaseException]
) -> None:
    error = raised(build(cls))
    # What add_note makes (BaseException.add_note is 3.11+, so is __notes__ in the type stubs).
    error.__notes__ = ["raised by env 3 during step"]  # type: ignore[attr-defined]
    error.extra = {"kept": True}  # type: ignore[attr-defined]
    copied = round_trip(error)
    assert copied is not error
    assert type(copied) is cls
    assert isinstance(copied, gymnasium.error.Error)
    if cls in SAME_NAME:
        assert isinstance(copied, SAME_NAME[cls])
    assert str(copied) == "it broke"
    assert copied.args == ("it broke",)
    assert copied.__notes__ == ["raised by env 3 during step"]
    assert copied.extra == {"kept": True}
    if cls in NAMED:
        assert copied.name == "step"


def test_the_class_itself_pickles_by_reference() -> None:
    # capture_error sends type(error) to the main process: it must arrive as our class, not a copy of it.
    for cls in ERRORS:
        assert pickle.loads(pickle.dumps(cls)) is cls
        assert cloudpickle.loads(cloudpickle.dumps(cls)) is cls


@pytest.mark.parametrize("cls", ERRORS, ids=ids)
def test_str_repr_and_traceback_name_our_class(cls: type[ve.Error]) -> None:
    error = raised(build(cls))
    assert str(error) == "it broke"
    assert repr(error) == f"{cls.__name__}('it broke')"  # (msg, name) classes too: name is not in args
    assert str(cls) == f"<class 'vecspaces.error.{cls.__name__}'>"
    assert traceback.format_exception_only(type(error), error) == [f"vecspaces.error.{cls.__name__}: it broke\n"]
    formatted = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert formatted.endswith(f"vecspaces.error.{cls.__name__}: it broke\n")


def test_wait_timeout_error_keeps_oserror_fields() -> None:
    plain = ve.WaitTimeoutError("step_wait timed out")
    assert (plain.errno, plain.strerror, str(plain)) == (None, None, "step_wait timed out")
    coded = ve.WaitTimeoutError(110, "step_wait timed out")
    assert (coded.errno, coded.strerror, str(coded)) == (110, "step_wait timed out", "[Errno 110] step_wait timed out")
    assert isinstance(coded, gymnasium.error.Error)
    for round_trip in ROUND_TRIPS:
        copied = round_trip(coded)
        assert isinstance(copied, ve.WaitTimeoutError)
        assert (copied.errno, copied.strerror) == (110, "step_wait timed out")
    with pytest.raises(ve.InvalidTypeError):
        raise ve.InvalidTypeError("x", "y", "z")  # BaseException takes any args: unchanged


@pytest.mark.parametrize("cls", ERRORS, ids=ids)
def test_an_error_rebuilt_from_a_worker_is_gymnasiums_too(cls: type[ve.Error]) -> None:
    # The path of an exception raised in a worker: packed there, rebuilt here without calling __init__.
    record = capture_error(raised(build(cls)), 2, "step")
    rebuilt = rebuild_error(pickle.loads(pickle.dumps(record)))
    assert type(rebuilt) is cls
    assert isinstance(rebuilt, gymnasium.error.Error)
    assert str(rebuilt) == "it broke"
    assert rebuilt.__notes__ == ["raised by env 2 during step"]
    if cls in NAMED:
        assert rebuilt.name == "step"
    assert record.type_name == f"vecspaces.error.{cls.__name__}"


# --- processes that never import gymnasium --------------------------------------------------------------------


def run(script: str, stdin: str = "") -> str:
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], input=stdin, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


# A process without gymnasium: a meta path entry refuses it, so an import of it anywhere would fail the test.
NO_GYMNASIUM = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "gymnasium":
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Block())
"""


def run_without_gymnasium(script: str, stdin: str = "") -> str:
    return run(NO_GYMNASIUM + textwrap.dedent(script), stdin)


def test_without_gymnasium_the_classes_are_unchanged() -> None:
    out = run_without_gymnasium(
        """
        import pickle, multiprocessing
        import vecspaces.error as ve
        from vecspaces.vector import AsyncVectorEnv, SyncVectorEnv  # imports around the vector envs too
        classes = [getattr(ve, name) for name in ve.__all__]
        classes = [cls for cls in classes if isinstance(cls, type) and issubclass(cls, ve.Error)]
        for cls in classes:
            error = cls("it broke", "step") if cls in (ve.AlreadyPendingCallError, ve.NoAsyncCallError) else cls("x")
            try:
                raise error
            except ve.Error as caught:
                assert type(caught) is cls
            copied = pickle.loads(pickle.dumps(error))
            assert type(copied) is cls and copied.args == error.args
            bases = {base.__module__.split(".")[0] for base in cls.__mro__}
            assert bases <= {"vecspaces", "builtins", "multiprocessing"}, (cls, bases)
        try:
            raise ve.NoAsyncCallError("no pending step", "step")
        except RuntimeError as caught:
            assert caught.name == "step"
        assert "gymnasium" not in sys.modules
        print(len(classes))
        """
    )
    assert out.split() == [str(len(ERRORS))]


def test_an_error_pickled_with_gymnasium_unpickles_without_it() -> None:
    error = raised(ve.NoAsyncCallError("no pending step", "step"))
    error.__notes__ = ["raised by env 1 during step"]  # type: ignore[attr-defined]
    data = [pickle.dumps(error).hex(), cloudpickle.dumps(error).hex()]
    out = run_without_gymnasium(
        """
        import pickle
        import vecspaces.error as ve
        for line in sys.stdin.read().split():
            error = pickle.loads(bytes.fromhex(line))
            assert type(error) is ve.NoAsyncCallError, type(error).__mro__
            assert (str(error), error.name) == ("no pending step", "step")
            assert error.__notes__ == ["raised by env 1 during step"]
        assert "gymnasium" not in sys.modules
        print("ok")
        """,
        stdin="\n".join(data),
    )
    assert out.split() == ["ok"]


def test_an_error_pickled_without_gymnasium_is_gymnasiums_here() -> None:
    out = run_without_gymnasium(
        """
        import pickle, cloudpickle
        import vecspaces.error as ve
        error = ve.AlreadyPendingCallError("a step is pending", "step")
        error.__notes__ = ["raised by the worker during reset"]
        print(pickle.dumps(error).hex())
        print(cloudpickle.dumps(error).hex())
        print(pickle.dumps(ve.ClosedEnvironmentError("closed")).hex())
        assert "gymnasium" not in sys.modules
        """
    )
    named, cloud, closed = (pickle.loads(bytes.fromhex(line)) for line in out.split())
    for error in (named, cloud):
        assert type(error) is ve.AlreadyPendingCallError
        assert isinstance(error, gymnasium.error.AlreadyPendingCallError)
        assert (str(error), error.name) == ("a step is pending", "step")
        assert error.__notes__ == ["raised by the worker during reset"]
    with pytest.raises(gymnasium.error.ClosedEnvironmentError, match="closed"):
        raise closed


def test_gymnasium_imported_after_vecspaces_is_seen_by_the_next_error() -> None:
    out = run(
        """
        import sys
        import vecspaces.error as ve
        before = ve.ClosedEnvironmentError("made before")
        assert "gymnasium" not in sys.modules
        assert "__new__" in vars(ve.Error)
        import gymnasium
        try:
            raise ve.NoAsyncCallError("no pending step", "step")
        except gymnasium.error.NoAsyncCallError as caught:
            assert caught.name == "step"
        assert "__new__" not in vars(ve.Error)  # the check is gone once done
        assert isinstance(before, gymnasium.error.ClosedEnvironmentError)  # the classes changed, so older errors too
        try:
            raise ve.WaitTimeoutError(110, "timed out")
        except gymnasium.error.Error as caught:
            assert (caught.errno, caught.strerror) == (110, "timed out")
        print("ok")
        """
    )
    assert out.split() == ["ok"]


def test_gymnasium_imported_first_is_seen_at_import() -> None:
    out = run(
        """
        import gymnasium
        import vecspaces.error as ve
        assert "__new__" not in vars(ve.Error)
        assert issubclass(ve.CustomSpaceNotImplementedError, gymnasium.error.CustomSpaceError)
        assert issubclass(ve.CustomSpaceNotImplementedError, NotImplementedError)
        print("ok")
        """
    )
    assert out.split() == ["ok"]


# --- end to end: vector envs over Gymnasium's CartPole ----------------------------------------------------------

make_cartpole = functools.partial(gymnasium.make, "CartPole-v1")


GymnasiumWrapper: Any = gymnasium.Wrapper


class RaisingCartPole(GymnasiumWrapper):
    """CartPole whose step raises one of our errors, in the worker."""

    def step(self, action: Any) -> Any:
        raise ve.CustomSpaceError("no kernel for this action")


def make_raising_cartpole() -> Any:
    return RaisingCartPole(gymnasium.make("CartPole-v1"))


def test_sync_vector_env_errors_are_gymnasiums() -> None:
    envs = SyncVectorEnv([make_cartpole] * 2)
    try:
        envs.reset(seed=0)
        with pytest.raises(gymnasium.error.Error, match="actions has the wrong shape") as caught:
            envs.step(np.array([0, 1, 1]))
        assert isinstance(caught.value, ValueError)
    finally:
        envs.close()


@pytest.mark.timeout(60)
def test_async_vector_env_errors_are_gymnasiums() -> None:
    envs = AsyncVectorEnv([make_cartpole] * 2, num_workers=2, timeout=30)
    try:
        envs.reset(seed=0)
        with pytest.raises(gymnasium.error.NoAsyncCallError) as no_call:
            envs.step_wait()
        assert no_call.value.name == "step"
        envs.step_async(np.array([0, 1]))
        with pytest.raises(gymnasium.error.AlreadyPendingCallError) as pending:
            envs.step_async(np.array([0, 1]))
        assert pending.value.name == "step"
        envs.step_wait()
    finally:
        envs.close()
    with pytest.raises(gymnasium.error.ClosedEnvironmentError):
        envs.reset()
    with pytest.raises(ve.ClosedEnvironmentError):
        envs.step(np.array([0, 1]))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("context", ["fork", "spawn"])
def test_an_error_raised_in_a_worker_is_gymnasiums_in_the_main_process(context: str) -> None:
    # Under spawn the worker imports vecspaces afresh (and gymnasium, through the env): our class travels by name.
    envs = AsyncVectorEnv([make_cartpole, make_raising_cartpole], context=context, num_workers=2, timeout=30)
    try:
        envs.reset(seed=0)
        with pytest.raises(gymnasium.error.CustomSpaceError, match="no kernel for this action") as caught:
            envs.step(np.array([0, 1]))
        assert type(caught.value) is ve.CustomSpaceError
        assert caught.value.__notes__ == ["raised by env 1 during step"]  # type: ignore[attr-defined]
    finally:
        envs.close()
