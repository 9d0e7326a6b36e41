"""List files of ``path label`` lines, read by ``PfioImageDataset`` (torch and chainer) as
Chainer's ``LabeledImageDataset`` reads them: an absolute path is that file, a relative one is
joined to the root (default: the list file's directory), ``..`` included.

The local cases are checked against Chainer's own ``LabeledImageDataset`` on the same list
file: the same images (pixels) and labels, in the same order.
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest

import pfio
from pfio.integrations import chainer as pfio_chainer  # first: it makes Chainer importable
from pfio.integrations.torch.images import PfioImageDataset

from .images import write_image_tree

chainer = pytest.importorskip("chainer")


@pytest.fixture
def images(tmp_path):
    """``tmp/data/imgs/class_k/img_i.png`` and the (path, label) pairs below ``imgs``."""
    root = tmp_path / "data" / "imgs"
    root.mkdir(parents=True)
    return root, write_image_tree(pfio.from_url(str(root)))


def _write_list(path, lines) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{name} {label}\n" for name, label in lines))
    return str(path)


def _same_as_chainer(list_file: str, root: str, expected_labels: list[int]) -> None:
    """Our torch and chainer datasets give what Chainer's LabeledImageDataset gives."""
    theirs = chainer.datasets.LabeledImageDataset(list_file, root=root)
    torch_set = PfioImageDataset(list_file)
    chainer_set = pfio_chainer.PfioImageDataset(list_file)
    assert len(theirs) == len(torch_set) == len(chainer_set) == len(expected_labels)
    for i, label in enumerate(expected_labels):
        image, their_label = theirs[i]
        ours, our_label = chainer_set[i]
        np.testing.assert_array_equal(ours, image)
        np.testing.assert_array_equal(torch_set[i][0].transpose(2, 0, 1), image)
        assert int(our_label) == int(their_label) == torch_set[i][1] == label


def test_a_list_file_of_absolute_paths_elsewhere(images, tmp_path):
    """The usual layout: ``lists/train.txt`` names ``/.../imgs/...`` (it failed with the
    list file's directory joined in front of each path)."""
    root, items = images
    list_file = _write_list(tmp_path / "lists" / "train.txt",
                            [(root / name, label) for name, label in items])
    _same_as_chainer(list_file, ".", [label for _, label in items])


def test_a_list_file_of_absolute_paths_below_its_directory(images, tmp_path):
    root, items = images
    list_file = _write_list(tmp_path / "data" / "train.txt",
                            [(root / name, label) for name, label in items])
    _same_as_chainer(list_file, ".", [label for _, label in items])


def test_a_list_file_of_paths_relative_to_it(images, tmp_path):
    _, items = images
    list_file = _write_list(tmp_path / "data" / "train.txt",
                            [(f"imgs/{name}", label) for name, label in items])
    _same_as_chainer(list_file, str(tmp_path / "data"), [label for _, label in items])


def test_a_list_file_of_paths_going_up_from_it(images, tmp_path):
    _, items = images
    list_file = _write_list(tmp_path / "data" / "lists" / "train.txt",
                            [(f"../imgs/{name}", label) for name, label in items])
    _same_as_chainer(list_file, str(tmp_path / "data" / "lists"),
                     [label for _, label in items])


def test_a_list_file_named_relative_to_the_working_directory(images, tmp_path, monkeypatch):
    _, items = images
    monkeypatch.chdir(tmp_path / "data")
    _write_list(tmp_path / "data" / "train.txt", [(f"imgs/{n}", label) for n, label in items])
    dataset = PfioImageDataset("train.txt")
    monkeypatch.chdir(tmp_path)  # resolved when the dataset was made
    assert [dataset[i][1] for i in range(len(dataset))] == [label for _, label in items]


def test_an_absolute_path_wins_over_root_as_in_os_path_join(images, tmp_path):
    root, items = images
    name, label = items[5]
    list_file = _write_list(tmp_path / "lists" / "train.txt", [(root / name, label)])
    dataset = PfioImageDataset(list_file, root=str(tmp_path / "elsewhere"))
    theirs = chainer.datasets.LabeledImageDataset(list_file, root=str(tmp_path / "elsewhere"))
    np.testing.assert_array_equal(dataset[0][0].transpose(2, 0, 1), theirs[0][0])


def test_a_list_file_separated_by_tabs(images, tmp_path):
    root, items = images
    list_file = tmp_path / "tabs.txt"
    list_file.write_text("".join(f"{root / n}\t{label}\n" for n, label in items[:3]))
    _same_as_chainer(str(list_file), ".", [label for _, label in items[:3]])


def test_a_list_file_dataset_pickles_for_workers(images, tmp_path):
    root, items = images
    list_file = _write_list(tmp_path / "lists" / "train.txt",
                            [(root / name, label) for name, label in items])
    dataset = pickle.loads(pickle.dumps(PfioImageDataset(list_file)))
    np.testing.assert_array_equal(dataset[3][0], PfioImageDataset(list_file)[3][0])


def test_a_mem_list_file_of_absolute_paths_names_the_store_top(request):
    store = f"mem://lists-{request.node.name}"
    items = write_image_tree(pfio.from_url(f"{store}/train", create=True))
    with pfio.open_url(f"{store}/lists/train.txt", "w") as f:
        f.writelines(f"/train/{name} {label}\n" for name, label in items)
    dataset = PfioImageDataset(f"{store}/lists/train.txt")
    assert [dataset[i][1] for i in range(len(dataset))] == [label for _, label in items]


def test_an_s3_list_file_of_absolute_keys_and_relative_ones(s3_env, s3_bucket):
    url = f"s3://{s3_bucket}"
    items = write_image_tree(pfio.from_url(f"{url}/train"))
    with pfio.open_url(f"{url}/lists/train.txt", "w") as f:
        f.writelines(f"/train/{name} {label}\n" for name, label in items[:2])
        f.writelines(f"../train/{name} {label}\n" for name, label in items[2:])
    dataset = PfioImageDataset(f"{url}/lists/train.txt")
    assert [dataset[i][1] for i in range(len(dataset))] == [label for _, label in items]
    direct = PfioImageDataset([f"{url}/train/{items[0][0]}"])
    np.testing.assert_array_equal(dataset[0][0], direct[0][0])


def test_a_url_of_another_store_in_a_list_file_is_a_value_error(images, tmp_path):
    list_file = tmp_path / "mixed.txt"
    list_file.write_text("mem://other/x.png 0\n")
    with pytest.raises(ValueError, match="mem://other/x.png"):
        PfioImageDataset(str(list_file))


def test_a_missing_image_named_in_a_list_file_is_file_not_found(tmp_path):
    list_file = tmp_path / "lists" / "train.txt"
    _write_list(list_file, [(tmp_path / "nope.png", 0)])
    dataset = PfioImageDataset(str(list_file))
    with pytest.raises(FileNotFoundError, match=os.path.basename("nope.png")):
        dataset[0]


def test_a_list_file_in_an_archive_names_members_from_the_archive_top(tmp_path):
    """In an archive, a leading ``/`` is the archive's top (as every archive takes it)."""
    import zipfile

    tree = pfio.from_url("mem://lists-in-archive/imgs", create=True)
    items = write_image_tree(tree)
    with zipfile.ZipFile(tmp_path / "train.zip", "w") as zf:
        for name, _ in items:
            zf.writestr(f"imgs/{name}", tree.open(name, "rb").read())
        zf.writestr("lists/train.txt", f"/imgs/{items[0][0]} 7\n../imgs/{items[5][0]} 8\n")
    dataset = PfioImageDataset(str(tmp_path / "train.zip" / "lists" / "train.txt"))
    assert [dataset[0][1], dataset[1][1]] == [7, 8]
    expected = PfioImageDataset([f"mem://lists-in-archive/imgs/{items[5][0]}"])[0][0]
    np.testing.assert_array_equal(dataset[1][0], expected)


def test_a_list_file_dataset_in_dataloader_workers(images, tmp_path):
    import torch.utils.data

    root, items = images
    list_file = _write_list(tmp_path / "lists" / "train.txt",
                            [(root / name, label) for name, label in items])
    loader = torch.utils.data.DataLoader(PfioImageDataset(list_file), batch_size=4,
                                         num_workers=2, multiprocessing_context="spawn")
    labels = [int(y) for _, batch in loader for y in batch]
    assert labels == [label for _, label in items]
