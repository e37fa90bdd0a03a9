"""Datasets: image and DNA-sequence loaders with one resolution order, and synthetic hierarchical DNA.

Public API::

    from hgutils.data import (load_images, load_sequences, one_hot_dna, hierarchical_sequences,
                              DataNotFoundError, ImageData, SequenceData)

- :func:`load_images` -- ``mnist``, ``fashion_mnist``, ``cifar10``, ``cifar100``, ``digits`` as
  :class:`ImageData` (``images`` ``[N, C, H, W]`` float32 in ``[0, 1]``, ``labels`` ``[N]`` int64).
- :func:`load_sequences` -- TEB (``"teb/<task>"``) and GUE (``"gue/<task>"``) CSV layouts as
  :class:`SequenceData`.
- :func:`one_hot_dna` -- ``[N, 5, L]`` one-hot over ``A, C, G, T, N``.
- :func:`hierarchical_sequences` -- synthetic clades -> families -> genes -> variants.
- :func:`ring_blobs`, :func:`square_grid`, :func:`swiss_roll`, :func:`unrolled_plane` -- small point
  sets and surfaces (:mod:`hgutils.data.points`).

Every loader searches ``data_dir``, then ``$HGUTILS_DATA``, then packaged copies, then (only with
``download=True``) downloads over HTTPS with a pinned sha256, and otherwise raises
:class:`DataNotFoundError` naming all these options. The ``source`` field says which copy was used.
"""

from hgutils.data.images import ImageData, load_images, read_idx
from hgutils.data.points import ring_blobs, square_grid, swiss_roll, unrolled_plane
from hgutils.data.resolve import DataNotFoundError, stratified_order, stratified_split
from hgutils.data.sequences import SequenceData, load_sequences, one_hot_dna
from hgutils.data.synthetic import hierarchical_sequences

__all__ = [
    "DataNotFoundError",
    "ImageData",
    "SequenceData",
    "hierarchical_sequences",
    "load_images",
    "load_sequences",
    "one_hot_dna",
    "read_idx",
    "ring_blobs",
    "square_grid",
    "stratified_order",
    "stratified_split",
    "swiss_roll",
    "unrolled_plane",
]
