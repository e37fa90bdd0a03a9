"""hgutils.dynamics: the angle-memory task, the stacked RNN and SSM, their batched training."""

from __future__ import annotations

import math

import pytest
import torch

from hgutils.dynamics import (
    AngleMemoryTask,
    SequenceTask,
    angle_grid,
    circular_error,
    init_rnn,
    init_ssm,
    learnability,
    outputs,
    representation,
    rnn_states,
    sample_angles,
    ssm_scan,
    ssm_scan_loop,
    ssm_state,
    subset,
    train_stack,
    wrap_angle,
)
from hgutils.loop import Budget, train

TASK = AngleMemoryTask(n_items=2, stim_steps=3, gap_steps=2, delay_steps=6, report_steps=3)


# --------------------------------------------------------------------------------------------
# the task
# --------------------------------------------------------------------------------------------
def test_target_is_the_presented_angle_after_the_delay():
    angles = sample_angles(16, 2, torch.Generator().manual_seed(0))
    x, y = TASK.inputs(angles), TASK.targets(angles)
    assert x.shape == (16, TASK.n_steps, 5) and y.shape == (16, TASK.n_steps, 4)
    # each angle is shown on its own channels during its presentation, and nowhere else
    for k in range(2):
        a = TASK.item_onset(k)
        shown = x[:, a : a + TASK.stim_steps, 2 * k : 2 * k + 2]
        ref = torch.stack([torch.cos(angles[:, k]), torch.sin(angles[:, k])], -1)[:, None]
        torch.testing.assert_close(shown, ref.expand_as(shown))
        rest = torch.ones(TASK.n_steps, dtype=torch.bool)
        rest[a : a + TASK.stim_steps] = False
        assert (x[:, rest, 2 * k : 2 * k + 2] == 0).all()
    # the delay carries no input at all; the go cue is on exactly during the report
    assert (x[:, TASK.stim_end : TASK.delay_end] == 0).all()
    assert (x[:, TASK.delay_end :, -1] == 1).all() and (x[:, : TASK.delay_end, -1] == 0).all()
    # the target is zero before the report and the presented angles' (cos, sin) after the delay
    assert (y[:, : TASK.delay_end] == 0).all()
    assert TASK.delay_end == TASK.stim_end + TASK.delay_steps
    decoded = TASK.decode(y[:, TASK.delay_end :])
    assert circular_error(decoded, angles[:, None, :]).max() < 1e-5
    assert TASK.report_error(y, angles).max() < 1e-5
    assert TASK.loss_mask.sum() == TASK.report_steps and TASK.loss_mask[TASK.delay_end :].all()


def test_task_timing_and_errors():
    assert TASK.n_steps == 3 + 2 + 3 + 6 + 3
    assert TASK.n_inputs == 5 and TASK.n_outputs == 4
    with pytest.raises(ValueError, match="delay_steps"):
        AngleMemoryTask(delay_steps=0)
    with pytest.raises(ValueError, match="gap_steps"):
        AngleMemoryTask(gap_steps=-1)
    with pytest.raises(ValueError, match=r"n_items=2"):
        TASK.inputs(torch.zeros(4, 3))
    with pytest.raises(ValueError, match="floating"):
        TASK.targets(torch.zeros(4, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="4 channels"):
        TASK.decode(torch.zeros(3, 5))
    with pytest.raises(ValueError, match="item index"):
        TASK.item_onset(2)


def test_angles_and_circular_error():
    g = angle_grid(4, 2)
    assert g.shape == (16, 2)
    assert torch.allclose(g[:4, 1], torch.tensor([0.5, 1.5, 2.5, 3.5]) * math.pi / 2)
    assert float(circular_error(torch.tensor(0.1), torch.tensor(2 * math.pi - 0.1))) == pytest.approx(0.2, abs=1e-6)
    assert float(wrap_angle(torch.tensor(3 * math.pi / 2))) == pytest.approx(-math.pi / 2)
    with pytest.raises(ValueError):
        angle_grid(0, 2)
    with pytest.raises(ValueError):
        sample_angles(0, 2)


# --------------------------------------------------------------------------------------------
# the models
# --------------------------------------------------------------------------------------------
def _complex_loop(p: dict[str, torch.Tensor], u: torch.Tensor) -> torch.Tensor:
    """An independent reference: x_t = λ x_{t-1} + γ B u_t in complex128, one network, one trial."""
    lam = torch.exp(-torch.exp(p["nu"].double()) + 1j * torch.exp(p["phi"].double()))
    gamma = torch.sqrt(1 - lam.abs() ** 2)
    B = torch.complex(p["B_re"].double(), p["B_im"].double())
    x = torch.zeros(lam.shape, dtype=torch.complex128)
    out = []
    for t in range(u.shape[0]):
        x = lam * x + gamma * (B @ u[t].to(torch.complex128))
        out.append(x)
    return torch.stack(out)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-6), (torch.float64, 1e-12)])
def test_ssm_recurrence_matches_a_direct_loop(dtype, tol):
    p = init_ssm(range(3), 5, 4, 16, state=12, max_phase=math.pi, dtype=dtype)
    u = torch.randn(7, 29, 5, generator=torch.Generator().manual_seed(1), dtype=dtype)
    scan, loop = ssm_scan(p, u), ssm_scan_loop(p, u)
    for a, b in zip(scan, loop):
        assert (a - b).abs().max() < tol * max(1.0, float(b.abs().max()))
    ref = torch.stack(
        [torch.stack([_complex_loop({k: v[n] for k, v in p.items()}, u[b]) for b in range(7)]) for n in range(3)]
    )
    assert (loop[0].double() - ref.real).abs().max() < tol * 10
    assert (loop[1].double() - ref.imag).abs().max() < tol * 10
    assert torch.equal(ssm_state(p, u), torch.cat(scan, -1))


def test_rnn_matches_torch_rnn():
    p = init_rnn(range(2), 5, 4, 8, gain=1.3, dtype=torch.float64)
    p["b"] = torch.randn(2, 8, dtype=torch.float64)
    u = torch.randn(3, 11, 5, dtype=torch.float64)
    h = rnn_states(p, u)
    for n in range(2):
        ref = torch.nn.RNN(5, 8, batch_first=True).double()
        with torch.no_grad():
            ref.weight_ih_l0.copy_(p["U"][n])
            ref.weight_hh_l0.copy_(p["W"][n])
            ref.bias_ih_l0.copy_(p["b"][n])
            ref.bias_hh_l0.zero_()
        torch.testing.assert_close(h[n], ref(u)[0], atol=1e-12, rtol=0)


def test_models_shapes_and_errors():
    pr, ps = init_rnn(range(2), 5, 4, 8), init_ssm(range(2), 5, 4, 8)
    u = torch.randn(3, 10, 5)
    for p in (pr, ps):
        h = representation(p, u)
        assert h.shape == (2, 3, 10, 8)
        assert outputs(p, h).shape == (2, 3, 10, 4)
        assert representation(p, u.expand(2, -1, -1, -1)).shape == (2, 3, 10, 8)
    # different seeds give different networks, the same seed the same one
    assert not torch.equal(pr["W"][0], pr["W"][1])
    assert torch.equal(init_rnn([7], 5, 4, 8)["W"][0], init_rnn([3, 7], 5, 4, 8)["W"][1])
    with pytest.raises(ValueError, match=r"\[B, T, n_in\]"):
        rnn_states(pr, torch.randn(3, 3, 10, 5))
    with pytest.raises(ValueError, match="r_min"):
        init_ssm([0], 5, 4, 8, r_min=0.99, r_max=0.9)
    with pytest.raises(ValueError, match="hidden"):
        init_rnn([0], 5, 4, 0)
    with pytest.raises(ValueError, match="seed"):
        init_rnn([], 5, 4, 8)


# --------------------------------------------------------------------------------------------
# batched training
# --------------------------------------------------------------------------------------------
def _angles(n: int, seed: int) -> torch.Tensor:
    return sample_angles(n, 2, torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("init", [init_rnn, init_ssm])
def test_a_stack_trains_its_networks_independently(init):
    """Network 0 trained in a stack of 3 ends where it ends trained alone (Adam is element-wise, each
    network's gradient is clipped on its own, the batches are the same)."""
    p = init(range(3), TASK.n_inputs, TASK.n_outputs, 8, dtype=torch.float64)
    tr, va = _angles(64, 0).double(), _angles(16, 1).double()
    kw = {"batch_size": 16, "lr": 1e-2, "clip": 0.5, "seed": 3}
    a = SequenceTask(p, TASK, tr, va, **kw)
    b = SequenceTask(subset(p, [0]), TASK, tr, va, **kw)
    train(a, Budget(epochs=3))
    train(b, Budget(epochs=3))
    for k in p:
        torch.testing.assert_close(a.params[k][:1], b.params[k], atol=1e-10, rtol=1e-8)
    assert not torch.equal(a.params["W"][0], a.params["W"][1])


def test_train_stack_learns_and_checks_learnability():
    p = init_ssm(range(2), TASK.n_inputs, TASK.n_outputs, 16)
    res = train_stack(
        p,
        TASK,
        _angles(256, 0),
        _angles(64, 1),
        angle_grid(5, 2),
        Budget(epochs=12, patience=5),
        max_error_deg=30.0,
        batch_size=32,
        lr=1e-2,
        input_noise=0.05,
    )
    assert res.val_loss.shape[1] == 2 and res.train_loss.shape == res.val_loss.shape
    assert (res.val_loss[-1] < res.val_loss[0]).all()
    assert res.heldout_error.shape == (2,)
    assert all(g.trained for g in res.gates), [g.reason for g in res.gates]
    assert torch.equal(res.params0["nu"], p["nu"])  # the initialisation is kept (the untrained control)


def test_learnability_gate():
    gates = learnability(
        torch.tensor([1.0, 1.0, 1.0]), torch.tensor([0.1, 0.1, 0.99]), torch.tensor([5.0, 12.0, 1.0]), max_error_deg=10
    )
    assert [g.trained for g in gates] == [True, False, False]
    assert "held-out report error 12.0°" in gates[1].reason
    assert "initial plateau" in gates[2].reason


def test_sequence_task_errors():
    p = init_rnn(range(2), TASK.n_inputs, TASK.n_outputs, 4)
    with pytest.raises(ValueError, match="train_angles"):
        SequenceTask(p, TASK, torch.zeros(8, 3), _angles(4, 0))
    with pytest.raises(ValueError, match="batch_size"):
        SequenceTask(p, TASK, _angles(8, 0), _angles(4, 0), batch_size=0)
    with pytest.raises(ValueError, match="lr"):
        SequenceTask(p, TASK, _angles(8, 0), _angles(4, 0), lr=0.0)
