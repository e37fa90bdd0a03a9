"""Weight-space augmentations (hgutils.weightspace.augment): the exact ones change the INR's input
coordinates and nothing else; the others are what the references' code computes."""

from __future__ import annotations

import math

import pytest
import torch

from hgutils.weightspace.augment import (
    REFERENCE_DEFAULTS,
    WEIGHT_NOISE_DEFAULTS,
    INRAugmentation,
    augment_inr,
    augment_weight_data,
    for_zoo,
    rotate_inputs,
    scale_inputs,
    translate_inputs,
)
from hgutils.weightspace.metanets.base import WeightData
from hgutils.weightspace.stacked_mlp import init_mlp, mlp_forward

SIZES = (2, 32, 32, 1)


def _sirens(n: int = 4, seed: int = 0) -> dict[str, torch.Tensor]:
    return init_mlp(n, SIZES, scheme="siren", generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _render(params: dict[str, torch.Tensor], n: int = 28) -> torch.Tensor:
    """Each INR's image on the grid ``x[i, j] = (lin[i], lin[j])``, ``lin`` = n points in [-1, 1]."""
    lin = torch.linspace(-1, 1, n, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(lin, lin, indexing="ij"), -1).reshape(-1, 2)
    return mlp_forward(params, grid, "sine", omega0=30.0).reshape(-1, n, n)


def test_translation_by_one_pixel_renders_the_image_shifted_by_one_pixel():
    params, n = _sirens(), 28
    step = 2.0 / (n - 1)
    t = torch.tensor([[step, 0.0], [0.0, step], [-step, 0.0], [0.0, -step]], dtype=torch.float64)
    img, moved = _render(params, n), _render(translate_inputs(params, t, 1), n)
    assert torch.allclose(moved[0, :-1], img[0, 1:], atol=1e-10)  # f(x + h e_0): row i shows row i + 1
    assert torch.allclose(moved[1, :, :-1], img[1, :, 1:], atol=1e-10)
    assert torch.allclose(moved[2, 1:], img[2, :-1], atol=1e-10)
    assert torch.allclose(moved[3, :, 1:], img[3, :, :-1], atol=1e-10)
    assert not torch.allclose(moved[0], img[0], atol=1e-3)  # the test can see a change


def test_rotation_by_a_quarter_turn_renders_the_rotated_image():
    params = _sirens()
    theta = torch.full((4,), math.pi / 2, dtype=torch.float64)
    img, turned = _render(params), _render(rotate_inputs(params, theta))
    # f(R x) with R (x0, x1) = (-x1, x0): pixel (i, j) shows pixel (n-1-j, i)
    assert torch.allclose(turned, img.flip(1).transpose(1, 2), atol=1e-10)


def test_translation_rotation_and_scaling_compose_to_one_input_transform():
    params = _sirens()
    g = torch.Generator().manual_seed(1)
    t = torch.rand(4, 2, generator=g, dtype=torch.float64) - 0.5
    theta = torch.rand(4, generator=g, dtype=torch.float64) - 0.5
    a = 1 + 0.4 * (torch.rand(4, generator=g, dtype=torch.float64) - 0.5)
    out = scale_inputs(rotate_inputs(translate_inputs(params, t, 1), theta), a)
    x = torch.rand(4, 50, 2, generator=g, dtype=torch.float64) * 2 - 1
    c, s = torch.cos(theta), torch.sin(theta)
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)
    moved = a[:, None, None] * torch.einsum("nij,npj->npi", R, x) + t[:, None, :]  # a R x + t
    want = mlp_forward(params, moved, "sine", omega0=30.0)
    assert torch.allclose(mlp_forward(out, x, "sine", omega0=30.0), want, atol=1e-10)


def test_deeper_translation_is_the_references_linear_push_forward():
    params = _sirens(2)
    t = torch.tensor([[0.1, -0.2], [0.3, 0.05]], dtype=torch.float64)
    out = translate_inputs(params, t, torch.tensor([2, 2]))
    v = torch.einsum("noi,ni->no", params["W1"], torch.einsum("noi,ni->no", params["W0"], t))  # W1 W0 t
    assert torch.allclose(out["b1"], params["b1"] + v, atol=1e-12)
    assert torch.equal(out["b0"], params["b0"]) and torch.equal(out["W0"], params["W0"])


def test_reference_noise_is_a_constant_shift_by_each_tensors_std():
    params = _sirens(3)
    s = INRAugmentation(translation=0, rotation_degrees=0, dropout=0, input_scale=0)
    out = augment_inr(params, torch.Generator().manual_seed(0), s)
    for k in ("W0", "W1", "W2", "b0", "b1"):
        std = params[k].flatten(1).std(1)
        shift = (out[k] - params[k]).flatten(1)
        assert torch.allclose(shift, 0.1 * std[:, None].expand_as(shift), atol=1e-12), k
    assert torch.equal(out["b2"], params["b2"])  # a one-entry bias is left alone, as in the references


def test_dropout_zeroes_about_p_and_rescales_the_rest():
    w = torch.ones(2, 300, 300, dtype=torch.float64)
    params = {"W0": w, "b0": torch.ones(2, 300, dtype=torch.float64)}
    s = INRAugmentation(translation=0, rotation_degrees=0, noise=0, input_scale=0, dropout=0.1)
    out = augment_inr(params, torch.Generator().manual_seed(0), s)["W0"]
    assert set(out.unique().tolist()) <= {0.0, 1 / 0.9}
    assert abs((out == 0).double().mean().item() - 0.1) < 0.01


def test_a_trajectory_is_augmented_as_one_network():
    params = _sirens(3)
    traj = {k: v[:, None].expand(v.shape[0], 5, *v.shape[1:]).clone() for k, v in params.items()}  # T = 5 copies
    out = augment_inr(traj, torch.Generator().manual_seed(0), REFERENCE_DEFAULTS)
    for k, v in out.items():
        assert v.shape == traj[k].shape
        assert torch.equal(v, v[:, :1].expand_as(v)), k  # every snapshot got its network's draw
        assert not torch.equal(v[0, 0], v[1, 0]) or k == "b2"  # networks got different draws


def test_the_same_generator_state_gives_the_same_augmentation_and_inputs_are_not_modified():
    params = _sirens(2)
    before = {k: v.clone() for k, v in params.items()}
    a = augment_inr(params, torch.Generator().manual_seed(5))
    b = augment_inr(params, torch.Generator().manual_seed(5))
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert all(torch.equal(params[k], before[k]) for k in params)


def test_bad_input_is_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="dropout"):
        INRAugmentation(dropout=1.0)
    with pytest.raises(ValueError, match="noise_kind"):
        INRAugmentation(noise_kind="uniform")
    with pytest.raises(ValueError, match="translation"):
        INRAugmentation(translation=float("nan"))
    with pytest.raises(ValueError, match="W0, b0"):
        augment_inr({"W0": torch.zeros(2, 3, 2)})
    with pytest.raises(ValueError, match="leading dims"):
        augment_inr({"W0": torch.zeros(2, 3, 2), "b0": torch.zeros(3, 3)})
    with pytest.raises(ValueError, match="2-d inputs"):
        rotate_inputs({"W0": torch.zeros(2, 3, 4), "b0": torch.zeros(2, 3)}, torch.zeros(2))
    with pytest.raises(ValueError, match="depth"):
        translate_inputs(_sirens(2), torch.zeros(2, 2, dtype=torch.float64), torch.tensor([1, 3]))


def test_a_one_dimensional_sine_inr_translated_and_scaled_renders_the_moved_function():
    """02's sine INRs have one input: translation and input scaling apply (rotation needs 2-d inputs)."""
    g = torch.Generator().manual_seed(3)
    params = init_mlp(3, (1, 16, 16, 1), scheme="siren", generator=g, dtype=torch.float64)
    t = torch.tensor([[0.3], [-0.1], [0.05]], dtype=torch.float64)
    a = torch.tensor([0.9, 1.1, 1.2], dtype=torch.float64)
    out = scale_inputs(translate_inputs(params, t, 1), a)
    x = torch.linspace(-1, 1, 41, dtype=torch.float64)[None, :, None].expand(3, -1, -1)
    want = mlp_forward(params, a[:, None, None] * x + t[:, None, :], "sine", omega0=30.0)  # f(a x + t)
    assert torch.allclose(mlp_forward(out, x, "sine", omega0=30.0), want, atol=1e-10)
    s = INRAugmentation(noise=0, dropout=0)
    moved = augment_inr(params, torch.Generator().manual_seed(0), s)
    assert torch.equal(moved["W1"], params["W1"]) and not torch.equal(moved["W0"], params["W0"])


def _standardised_batch(n: int = 6, T: int = 2) -> tuple[WeightData, dict[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(0)
    raw = init_mlp(n * T, SIZES, scheme="siren", generator=g, dtype=torch.float64)
    raw = {k: v.reshape(n, T, *v.shape[1:]) for k, v in raw.items()}
    norm = tuple((raw[f"{p}{l}"].mean(0), raw[f"{p}{l}"].std(0)) for l in range(3) for p in "Wb")  # per entry
    z = {
        f"{p}{l}": (raw[f"{p}{l}"] - norm[2 * l + k][0]) / norm[2 * l + k][1]
        for l in range(3)
        for k, p in enumerate("Wb")
    }
    data = WeightData(tuple(z[f"W{l}"] for l in range(3)), tuple(z[f"b{l}"] for l in range(3)), norm)
    return data, raw


def test_a_standardised_batch_is_augmented_on_its_raw_weights_then_standardised_again():
    data, raw = _standardised_batch()
    out = augment_weight_data(data, torch.Generator().manual_seed(7), REFERENCE_DEFAULTS)
    direct = augment_inr(raw, torch.Generator().manual_seed(7), REFERENCE_DEFAULTS)
    assert out.norm is data.norm
    for l in range(3):
        for k, (p, x) in enumerate((("W", out.weights[l]), ("b", out.biases[l]))):
            mu, d = data.norm[2 * l + k]
            assert torch.allclose(x * d + mu, direct[f"{p}{l}"], atol=1e-10), f"{p}{l}"
    plain = WeightData(tuple(raw[f"W{l}"] for l in range(3)), tuple(raw[f"b{l}"] for l in range(3)))
    same = augment_weight_data(plain, torch.Generator().manual_seed(7), REFERENCE_DEFAULTS)  # raw: as it is
    assert all(torch.equal(same.weights[l], direct[f"W{l}"]) for l in range(3))
    with pytest.raises(ValueError, match="WeightData"):
        augment_weight_data(raw, None, REFERENCE_DEFAULTS)


def test_coordinate_transforms_are_switched_off_on_zoos_that_are_not_of_inrs():
    assert for_zoo(REFERENCE_DEFAULTS, "inr") is REFERENCE_DEFAULTS and for_zoo(REFERENCE_DEFAULTS, "sine").translation
    kept = for_zoo(REFERENCE_DEFAULTS, "classifier")
    assert kept.coordinate_transforms == () and (kept.noise, kept.dropout) == (0.1, 0.01)
    assert for_zoo(REFERENCE_DEFAULTS, None).coordinate_transforms == ()  # unknown kind: not assumed to be INRs
    assert for_zoo(WEIGHT_NOISE_DEFAULTS, "classifier") is WEIGHT_NOISE_DEFAULTS
    assert REFERENCE_DEFAULTS.describe() == (
        "translation 0.25, rotation 45, reference noise 0.1 std, dropout 0.01, input scale 0.2"
    )
    assert INRAugmentation(0, 0, 0, dropout=0, input_scale=0).describe() == "none"
