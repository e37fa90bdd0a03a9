"""``hgutils.nn.compiled``: a failed compile falls back to eager with one warning; errors of the function
itself still reach the caller; a working compile gives the eager result."""

from __future__ import annotations

import pytest
import torch

from hgutils.nn import compiled as compiled_mod


def _f(x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 1:
        raise ValueError("x must be 1-d")
    return torch.tanh(x) * 2 + x.square()


def _broken_compile(fn, dynamic=None):
    def run(*a, **k):
        raise RuntimeError("CppCompileError: no C++ compiler\nsecond line")

    return run


def test_failed_compile_falls_back_to_eager_once(monkeypatch):
    monkeypatch.setattr(compiled_mod.torch, "compile", _broken_compile)
    f = compiled_mod.compiled(_f)
    x = torch.linspace(-1, 1, 5)
    with pytest.warns(UserWarning, match="torch.compile of _f failed .*CppCompileError: no C\\+\\+ compiler"):
        y = f(x)
    assert torch.equal(y, _f(x))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no second warning: the wrapper is eager from now on
        assert torch.equal(f(x), _f(x))


def test_errors_of_the_function_reach_the_caller(monkeypatch):
    monkeypatch.setattr(compiled_mod.torch, "compile", _broken_compile)
    f = compiled_mod.compiled(_f)
    with pytest.warns(UserWarning), pytest.raises(ValueError, match="x must be 1-d"):
        f(torch.zeros(2, 2))


@pytest.mark.slow
def test_compiled_equals_eager_and_keeps_compiling():
    f = compiled_mod.compiled(_f)
    x = torch.linspace(-2, 2, 7, dtype=torch.float64)
    assert torch.allclose(f(x), _f(x), rtol=0, atol=1e-12)
    assert f.compiled is not None and f.checked  # the compiled path ran, no fallback
    with pytest.raises(ValueError, match="x must be 1-d"):  # a user error after a compile is not swallowed
        f(torch.zeros(2, 2, dtype=torch.float64))
    assert f.compiled is not None


def test_the_wrapper_pickles_and_rebuilds_its_compile(monkeypatch):
    """A forked worker pickles a model that holds the wrapper: the ``torch.compile`` object is left out and
    rebuilt on unpickling; a wrapper whose compile had failed stays eager (no second warning)."""
    import pickle

    f = compiled_mod.compiled(_f)
    g = pickle.loads(pickle.dumps(f))
    assert g.fn is _f and g.dynamic is False and g.compiled is not None and not g.checked
    monkeypatch.setattr(compiled_mod.torch, "compile", _broken_compile)
    x = torch.linspace(-1, 1, 5)
    with pytest.warns(UserWarning):
        f2 = compiled_mod.compiled(_f)
        f2(x)
    h = pickle.loads(pickle.dumps(f2))
    assert h.compiled is None
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch.equal(h(x), _f(x))
