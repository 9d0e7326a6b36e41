"""Decoding DCP's tensor items from bytes in memory: a view over the bytes (no copy) with the
tensor's own dtype, size and strides, layouts reused only for alike items, and torch.load for
what is not a plain tensor; copies into the state dict's tensors are exact."""

from __future__ import annotations

import io

import pytest
import torch

from pfio.integrations.torch.dcp import items as items_module
from pfio.integrations.torch.dcp.items import Items, copy_into, layout_of


def _saved(value: object) -> memoryview:
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return memoryview(bytearray(buffer.getvalue()))


@pytest.mark.parametrize("tensor", [
    torch.randn(300, 200),
    torch.randn(300, 200).t(),  # non-contiguous strides
    torch.arange(24, dtype=torch.int64).reshape(2, 3, 4),
    torch.randn(1000).to(torch.bfloat16),
    torch.tensor([True, False, True]),
    torch.empty(0, 5),
    torch.tensor(3.5),  # zero dimensions
], ids=["float", "transposed", "int64", "bf16", "bool", "empty", "scalar"])
def test_a_tensor_decodes_exactly(tensor):
    decoded = Items().tensor(_saved(tensor))
    assert decoded.dtype == tensor.dtype and decoded.size() == tensor.size()
    assert decoded.stride() == tensor.stride()
    assert torch.equal(decoded, tensor)


def test_the_tensor_is_a_view_over_the_bytes():
    data = _saved(torch.zeros(1000))
    decoded = Items().tensor(data)
    start = layout_of(data).start
    data[start:start + 4] = memoryview(bytearray(torch.tensor([7.0]).numpy().tobytes()))
    assert decoded[0].item() == 7.0


def test_a_layout_serves_alike_items_only(monkeypatch):
    read = []
    monkeypatch.setattr(items_module, "layout_of",
                        lambda data: read.append(len(data)) or layout_of(data))
    decoder = Items()
    first, second = torch.randn(1000), torch.randn(1000)
    other = torch.randn(10, 100)  # as many bytes, another size: another layout
    assert torch.equal(decoder.tensor(_saved(first)), first)
    assert torch.equal(decoder.tensor(_saved(second)), second)
    assert len(read) == 1
    decoded = decoder.tensor(_saved(other))
    assert decoded.size() == (10, 100) and torch.equal(decoded, other)
    assert len(read) == 2


def test_what_is_not_a_plain_tensor_goes_to_torch_load():
    quantized = torch.quantize_per_tensor(torch.randn(10), 0.1, 0, torch.qint8)
    data = _saved(quantized)
    assert layout_of(data) is None
    assert torch.equal(Items().tensor(data).int_repr(), quantized.int_repr())


def test_an_item_that_is_not_a_tensor_raises():
    with pytest.raises(ValueError, match="not a tensor"):
        Items().tensor(_saved({"a": 1}))


def test_corrupt_bytes_raise_from_torch_load():
    data = memoryview(bytearray(_saved(torch.randn(10)).tobytes()[:-40]))
    with pytest.raises(Exception):  # noqa: B017 - torch.load's own error
        Items().tensor(data)


@pytest.mark.parametrize("target,source", [
    (torch.zeros(4, 5), torch.randn(4, 5)),
    (torch.zeros(5, 4).t(), torch.randn(4, 5)),  # a non-contiguous target
    (torch.zeros(4, 5), torch.randn(5, 4).t()),  # a non-contiguous source
    (torch.zeros(4, 5, dtype=torch.float64), torch.randn(4, 5)),  # another dtype
], ids=["contiguous", "target-strided", "source-strided", "dtype"])
def test_copy_into_is_exact(target, source):
    copy_into(target, source)
    assert torch.equal(target, source.to(target.dtype))


def test_copy_into_refuses_another_size():
    with pytest.raises(ValueError, match="size"):
        copy_into(torch.zeros(3), torch.zeros(4))


def test_another_byte_order_goes_to_torch_load():
    import zipfile

    source = _saved(torch.arange(6, dtype=torch.int32))
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(source)) as old, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as new:
        for name in old.namelist():
            flipped = name.endswith("/byteorder")
            new.writestr(name, b"big" if flipped else old.read(name))
    data = memoryview(bytearray(out.getvalue()))
    assert layout_of(data) is None
    assert torch.equal(Items().tensor(data), torch.load(io.BytesIO(data)))
    assert not torch.equal(Items().tensor(data), torch.arange(6, dtype=torch.int32))
