"""MSA on the input-time manifold (hgutils.similarity.input_time) and DSA through dsa-metric
(hgutils.similarity.dynamical)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import hgutils.similarity.dynamical as dyn
from hgutils.dynamics import AngleMemoryTask, angle_grid, init_rnn, init_ssm, representation, sample_angles
from hgutils.similarity.input_time import (
    coded_metrics,
    input_time_jacobians,
    input_time_metrics,
    input_time_msa,
    pair_msa,
    temporal_msa,
    trajectory_jacobians,
)

TASK = AngleMemoryTask(n_items=2, stim_steps=2, gap_steps=1, delay_steps=6, report_steps=2)
WIN = slice(TASK.stim_end, TASK.delay_end)


def _f(params, transform=None):
    def f(angles):
        h = representation(params, TASK.inputs(angles))[:, :, WIN]
        return h if transform is None else transform(h)

    return f


def _metrics(f, points, dt=1.0):
    h, dh = trajectory_jacobians(f, points)
    return input_time_metrics(h, dh, dt)


@pytest.mark.parametrize("init", [init_rnn, init_ssm])
def test_msa_of_a_network_and_its_rotated_scaled_self_is_zero(init):
    p = init(range(2), TASK.n_inputs, TASK.n_outputs, 12, dtype=torch.float64)
    pts = angle_grid(5, 2).double()
    Q, _ = torch.linalg.qr(torch.randn(12, 12, dtype=torch.float64, generator=torch.Generator().manual_seed(0)))
    G = _metrics(_f(p), pts)
    G_rot = _metrics(_f(p, lambda h: 3.7 * h @ Q.T), pts)  # h -> s Q h: a rotation and a global scaling
    assert G.shape == (2, 25, TASK.delay_steps - 1, 3, 3)
    D = input_time_msa(torch.cat([G, G_rot]))
    assert abs(D[0, 2]) < 1e-10 and abs(D[1, 3]) < 1e-10
    assert D[0, 1] > 0.05  # two different networks are not alike: the zeros above are not trivial
    assert pair_msa(G[0], G_rot[0]) < 1e-10


def test_the_time_unit_does_not_change_msa():
    p = init_rnn(range(2), TASK.n_inputs, TASK.n_outputs, 10, dtype=torch.float64)
    pts = angle_grid(4, 2).double()
    h, dh = trajectory_jacobians(_f(p), pts)
    d1 = input_time_msa(input_time_metrics(h, dh, dt=1.0))
    d2 = input_time_msa(input_time_metrics(h, dh, dt=0.01))
    # a congruence leaves d_SR unchanged up to the scale-relative regularisation eps·tr(G)/m, which a
    # 100x time unit moves by O(eps·cond): here about 2e-6
    np.testing.assert_allclose(d1, d2, atol=1e-5)


def test_input_time_jacobian_is_the_interpolants_derivative():
    """At the midpoint of each segment the Jacobian equals the finite difference of the piecewise-linear
    interpolant in t and the average of the step Jacobians in θ (checked against autograd and differences)."""
    torch.manual_seed(0)
    p = init_ssm(range(1), TASK.n_inputs, TASK.n_outputs, 6, dtype=torch.float64)
    pts = angle_grid(3, 2).double()
    h, dh = trajectory_jacobians(_f(p), pts)
    J = input_time_jacobians(h, dh, dt=0.5)
    assert J.shape == (1, 9, TASK.delay_steps - 1, 6, 3)
    torch.testing.assert_close(J[..., 2], (h[:, :, 1:] - h[:, :, :-1]) / 0.5)
    # the θ columns: central differences of the trajectory in each angle
    eps = 1e-6
    for j in range(2):
        e = torch.zeros(2, dtype=torch.float64)
        e[j] = eps
        fd = (_f(p)(pts + e) - _f(p)(pts - e)) / (2 * eps)
        torch.testing.assert_close(dh[..., j], fd, atol=1e-7, rtol=1e-6)
        torch.testing.assert_close(J[..., j], 0.5 * (fd[:, :, 1:] + fd[:, :, :-1]), atol=1e-7, rtol=1e-6)


def test_temporal_msa():
    p = init_rnn(range(1), TASK.n_inputs, TASK.n_outputs, 10, dtype=torch.float64)
    pts = angle_grid(4, 2).double()
    _, dh = trajectory_jacobians(_f(p), pts)
    C = coded_metrics(dh)[0]  # [P, T', 2, 2]
    D = temporal_msa(C)
    assert D.shape == (TASK.delay_steps, TASK.delay_steps)
    np.testing.assert_allclose(D, D.T)
    assert np.all(np.diag(D) == 0) and D.max() > 0
    # one coded angle: every 1x1 metric is a scale of every other, so nothing changes over time
    assert np.abs(temporal_msa(C[..., :1, :1])).max() < 1e-12


def test_input_time_errors():
    with pytest.raises(ValueError, match=r"\[P >= 1, m\]"):
        trajectory_jacobians(lambda x: x, torch.zeros(3))
    with pytest.raises(ValueError, match="floating"):
        trajectory_jacobians(lambda x: x, torch.zeros(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="coordinate axis"):
        input_time_metrics(torch.zeros(4, 5, 3), torch.zeros(4, 5, 3))
    with pytest.raises(ValueError, match="2 time steps"):
        input_time_metrics(torch.zeros(4, 1, 3), torch.zeros(4, 1, 3, 2))
    with pytest.raises(ValueError, match="dt"):
        input_time_jacobians(torch.zeros(4, 5, 3), torch.zeros(4, 5, 3, 2), dt=0.0)
    with pytest.raises(ValueError, match=r"\[P, T, m, m\]"):
        temporal_msa(torch.zeros(3, 2, 2))
    with pytest.raises(ValueError, match="same shape"):
        pair_msa(torch.zeros(3, 2, 2), torch.zeros(4, 2, 2))


# --------------------------------------------------------------------------------------------
# DSA
# --------------------------------------------------------------------------------------------
def _systems(n: int = 3, hidden: int = 6) -> list[torch.Tensor]:
    p = init_rnn(range(n), TASK.n_inputs, TASK.n_outputs, hidden, gain=1.5)
    with torch.no_grad():
        h = representation(p, TASK.inputs(sample_angles(8, 2, torch.Generator().manual_seed(0))))
    return list(h[:, :, WIN])


def test_dsa_is_called_through_dsa_metric(monkeypatch):
    import DSA

    calls = []
    real = DSA.DSA

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(DSA, "DSA", spy)
    S = dyn.dsa_matrix(_systems(), n_delays=2, rank=4, iters=20)
    assert len(calls) == 1
    assert calls[0]["score_method"] == "angular" == dyn.DSA_SCORE
    assert (calls[0]["n_delays"], calls[0]["rank"], calls[0]["iters"]) == (2, 4, 20)
    assert S.shape == (3, 3)
    np.testing.assert_allclose(np.diag(S), 1.0)
    np.testing.assert_allclose(S, S.T)
    assert ((S >= 0) & (S <= 1)).all() and S[0, 1] < 1


def test_dsa_is_reproducible_and_leaves_the_random_stream():
    systems = _systems()
    torch.manual_seed(5)
    before = torch.rand(1)
    torch.manual_seed(5)
    a = dyn.dsa_matrix(systems, n_delays=2, rank=4, iters=10, seed=1)
    after = torch.rand(1)
    b = dyn.dsa_matrix(systems, n_delays=2, rank=4, iters=10, seed=1)
    np.testing.assert_array_equal(a, b)
    assert torch.equal(before, after)
    # a system and its rotated, scaled copy have the same dynamics: the optimised angle approaches 0 (the
    # package's gradient descent starts away from the identity, so it gets there only with enough steps)
    Q, _ = torch.linalg.qr(torch.randn(6, 6, generator=torch.Generator().manual_seed(2)))
    same = dyn.dsa_matrix([systems[0], 2.0 * systems[0] @ Q.T, systems[1]], n_delays=2, rank=4, iters=300)
    assert same[0, 1] > 0.95 and same[0, 1] > same[0, 2]


def test_dsa_errors():
    s = _systems(2)
    with pytest.raises(ValueError, match="at least 2"):
        dyn.dsa_matrix(s[:1], n_delays=2, rank=4)
    with pytest.raises(ValueError, match=r"\[trials, T, D\]"):
        dyn.dsa_matrix([s[0][0], s[1][0]], n_delays=2, rank=4)
    with pytest.raises(ValueError, match="rank"):
        dyn.dsa_matrix(s, n_delays=2, rank=100)
    with pytest.raises(ValueError, match="steps"):
        dyn.dsa_matrix(s, n_delays=10, rank=4)
    with pytest.raises(ValueError, match="NaN"):
        dyn.dsa_matrix([s[0], s[1] * math.nan], n_delays=2, rank=4)
