r"""CIFAR ResNets in three flavours sharing one trunk definition: Euclidean, HCNN-Lorentz, ILNN.

The trunk (:class:`ResNet`, :class:`BasicBlock`) is written once against
:class:`hgutils.nn.ops.Ops` (lift, conv, bn, act, residual add, global pool, head); a flavour only
swaps the ops, and :class:`hgutils.nn.ops.LorentzOptions` holds the Lorentz choices (log-radius scale
direction, PLFC init, batch norm and its statistic, residual, input lift). Lorentz flavours carry
channel-last ``[B, H, W, C+1]`` features. Depths: ResNet-18 = ``(2, 2, 2, 2)`` blocks with widths
``(64, 128, 256, 512)`` (the ILNN paper's, arXiv:2602.23981 §5); ResNet-8 = ``(1, 1, 1)``,
ResNet-10 = ``(1, 1, 1, 1)`` with any widths (CPU presets).
"""

from __future__ import annotations

import torch
from torch import nn

from hgutils.nn.ops import FLAVOURS, LorentzOptions, Ops

__all__ = ["FLAVOURS", "BasicBlock", "ResNet", "resnet", "DEPTHS"]

DEPTHS: dict[int, tuple[int, ...]] = {8: (1, 1, 1), 10: (1, 1, 1, 1), 18: (2, 2, 2, 2)}


class BasicBlock(nn.Module):
    """conv3x3-bn-act-conv3x3-bn + shortcut (1x1 conv + bn when shape changes), then act."""

    def __init__(self, ops: Ops, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__()
        self.ops = ops
        self.conv1, self.bn1 = ops.conv(cin, cout, 3, stride, 1), ops.bn(cout)
        self.act1, self.act2 = ops.act(), ops.act()
        self.conv2, self.bn2 = ops.conv(cout, cout, 3, 1, 1), ops.bn(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(ops.conv(cin, cout, 1, stride, 0), ops.bn(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.bn2(self.conv2(self.act1(self.bn1(self.conv1(x)))))
        s = x if self.shortcut is None else self.shortcut(x)
        return self.act2(self.ops.add(y, s))


class ResNet(nn.Module):
    """CIFAR ResNet: stem conv3x3-bn-act → stages of BasicBlocks (stride 2 between stages) → pool → head."""

    def __init__(
        self,
        flavour: str,
        blocks: tuple[int, ...] = (1, 1, 1),
        widths: tuple[int, ...] = (16, 32, 64),
        num_classes: int = 10,
        c: float = 1.0,
        in_channels: int = 3,
        options: LorentzOptions | None = None,
        bn: str | None = None,
    ) -> None:
        super().__init__()
        if len(blocks) != len(widths):
            raise ValueError(f"blocks {blocks} and widths {widths} must have the same length")
        self.flavour = flavour
        ops = Ops(flavour, c, options, bn)
        self.options = ops.options
        layers: list[nn.Module] = [ops.lift(), ops.conv(in_channels, widths[0], 3, 1, 1), ops.bn(widths[0]), ops.act()]
        cin = widths[0]
        for i, (nb, w) in enumerate(zip(blocks, widths)):
            for j in range(nb):
                layers.append(BasicBlock(ops, cin, w, 2 if (i > 0 and j == 0) else 1))
                cin = w
        layers.append(ops.pool())
        self.features = nn.Sequential(*layers)
        self.head = ops.head(cin, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def resnet(
    flavour: str,
    depth: int = 8,
    num_classes: int = 10,
    widths: tuple[int, ...] | None = None,
    c: float = 1.0,
    options: LorentzOptions | None = None,
    bn: str | None = None,
) -> ResNet:
    """ResNet-``depth`` (8, 10 or 18) in ``flavour``; ``widths`` default (16, 32, 64) for 8 and
    (64, 128, 256, 512) for 10/18; ``options`` / ``bn`` as in :class:`hgutils.nn.ops.Ops`."""
    if depth not in DEPTHS:
        raise ValueError(f"depth must be one of {sorted(DEPTHS)}; got {depth}")
    blocks = DEPTHS[depth]
    if widths is None:
        widths = (16, 32, 64) if depth == 8 else (64, 128, 256, 512)
    return ResNet(flavour, blocks, tuple(widths), num_classes, c, options=options, bn=bn)
