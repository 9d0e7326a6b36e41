"""Decoding sample fields by extension, and encoding them back
(pfio.integrations.shards.decode and .encode)."""

import io
import pickle

import numpy as np
import pytest
from PIL import Image

from pfio.integrations.shards import Decoder, encode_field, make_decoder


def _png(array):
    out = io.BytesIO()
    Image.fromarray(array).save(out, "PNG")
    return out.getvalue()


RGB = np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)


def _sample(**fields):
    return {"__key__": "k", "__url__": "mem://s/x.tar", **fields}


@pytest.mark.parametrize("ext", ["cls", "cls2", "index", "id"])
def test_class_fields_are_ints(ext):
    assert make_decoder("pil")(_sample(**{ext: b" 7\n"}))[ext] == 7


@pytest.mark.parametrize("ext", ["txt", "text"])
def test_text_fields_are_str(ext):
    assert make_decoder("pil")(_sample(**{ext: "héllo".encode()}))[ext] == "héllo"


@pytest.mark.parametrize("ext", ["json", "jsn"])
def test_json_fields_are_objects(ext):
    assert make_decoder("pil")(_sample(**{ext: b'{"a": [1, 2]}'}))[ext] == {"a": [1, 2]}


def test_npy_and_npz_fields_are_arrays():
    decoded = make_decoder("numpy")(_sample(npy=encode_field("npy", RGB),
                                            npz=encode_field("npz", {"x": RGB, "y": RGB[0]})))
    np.testing.assert_array_equal(decoded["npy"], RGB)
    assert sorted(decoded["npz"]) == ["x", "y"]
    np.testing.assert_array_equal(decoded["npz"]["y"], RGB[0])


def test_images_as_pil_numpy_and_torch():
    torch = pytest.importorskip("torch")
    data = _png(RGB)
    pil = make_decoder("pil")(_sample(png=data))["png"]
    assert isinstance(pil, Image.Image) and pil.mode == "RGB" and pil.size == (5, 4)
    array = make_decoder("numpy")(_sample(png=data))["png"]
    assert array.dtype == np.uint8 and array.shape == (4, 5, 3)
    np.testing.assert_array_equal(array, RGB)
    tensor = make_decoder("torch")(_sample(png=data))["png"]
    assert tensor.dtype == torch.uint8 and tuple(tensor.shape) == (3, 4, 5)
    assert torch.equal(tensor, torch.from_numpy(RGB).permute(2, 0, 1))


@pytest.mark.parametrize("ext", ["jpg", "jpeg", "png", "ppm", "pgm", "pbm", "bmp", "webp",
                                 "tif", "tiff"])
def test_every_image_extension_round_trips(ext):
    decoded = make_decoder("numpy")(_sample(**{ext: encode_field(ext, RGB)}))[ext]
    assert decoded.shape == (4, 5, 3) and decoded.dtype == np.uint8


def test_the_last_extension_chooses_the_decoder():
    decoded = make_decoder("numpy")(_sample(**{"seg.png": _png(RGB), "meta.json": b"[1]"}))
    assert decoded["seg.png"].shape == (4, 5, 3) and decoded["meta.json"] == [1]


def test_basic_leaves_images_as_bytes():
    data = _png(RGB)
    decoded = make_decoder("basic")(_sample(png=data, cls=b"2"))
    assert decoded["png"] == data and decoded["cls"] == 2


def test_no_decoder_and_unknown_extensions_keep_bytes():
    assert make_decoder(None) is None
    assert make_decoder("pil")(_sample(xyz=b"raw"))["xyz"] == b"raw"


def test_key_and_url_are_left_alone():
    decoded = make_decoder("pil")(_sample(cls=b"1"))
    assert (decoded["__key__"], decoded["__url__"]) == ("k", "mem://s/x.tar")


def test_audio_fields_decode_with_soundfile():
    pytest.importorskip("soundfile")
    samples = np.linspace(-0.5, 0.5, 800)
    for ext in ("wav", "flac"):
        data = encode_field(ext, (samples, 8000))
        decoded, rate = make_decoder("pil")(_sample(**{ext: data}))[ext]
        assert rate == 8000 and len(decoded) == 800
        np.testing.assert_allclose(decoded, samples, atol=1e-3)


def test_pickles_are_refused_unless_allowed():
    data = pickle.dumps({"a": 1})
    for ext in ("pyd", "pickle", "pkl"):
        with pytest.raises(ValueError, match="allow_pickle=True"):
            make_decoder("pil")(_sample(**{ext: data}))
        assert Decoder("pil", allow_pickle=True)(_sample(**{ext: data}))[ext] == {"a": 1}


class Payload:
    """Not a tensor, nor anything ``weights_only`` loading allows."""


def test_pth_fields_load_with_weights_only():
    torch = pytest.importorskip("torch")
    data = encode_field("pth", {"w": torch.arange(3)})
    assert torch.equal(make_decoder("pil")(_sample(pth=data))["pth"]["w"], torch.arange(3))
    bad = encode_field("pth", Payload())
    with pytest.raises(ValueError, match="pth"):
        make_decoder("pil")(_sample(pth=bad))


def test_a_callable_decodes_every_field():
    decoder = make_decoder(lambda ext, data: (ext, len(data)))
    assert decoder(_sample(a=b"12", b=b"3")) == {"__key__": "k", "__url__": "mem://s/x.tar",
                                                 "a": ("a", 2), "b": ("b", 1)}


def test_a_dict_decodes_its_extensions_and_leaves_the_others():
    decoder = make_decoder({".txt": lambda data: data.upper()})
    assert decoder(_sample(txt=b"ab", cls=b"1")) == {
        "__key__": "k", "__url__": "mem://s/x.tar", "txt": b"AB", "cls": b"1"}


def test_handlers_override_the_builtin_decoders():
    decoder = Decoder("pil", handlers={"cls": lambda data: "class " + data.decode()})
    assert decoder(_sample(cls=b"4"))["cls"] == "class 4"


def test_undecodable_fields_name_the_shard_the_key_and_the_field():
    with pytest.raises(ValueError) as info:
        make_decoder("pil")(_sample(jpg=b"not an image"))
    assert all(s in str(info.value) for s in ("mem://s/x.tar", "'k'", "'jpg'"))


def test_unknown_decode_arguments_are_refused():
    with pytest.raises(ValueError):
        make_decoder("opencv")
    with pytest.raises(ValueError):
        make_decoder(3)


def test_decoders_pickle_for_spawned_workers():
    for spec in ("pil", "numpy", "torch", "basic", {"txt": bytes.decode}):
        decoder = pickle.loads(pickle.dumps(make_decoder(spec)))
        assert decoder(_sample(cls=b"5", txt=b"x"))["cls"] in (5, b"5")


def test_encoding_inverts_decoding():
    sample = _sample(cls=3, txt="t", json={"b": [1]}, npy=RGB, png=RGB)
    encoded = {ext: v if ext.startswith("__") else encode_field(ext, v)
               for ext, v in sample.items()}
    decoded = make_decoder("numpy")(encoded)
    assert (decoded["cls"], decoded["txt"], decoded["json"]) == (3, "t", {"b": [1]})
    np.testing.assert_array_equal(decoded["npy"], RGB)
    np.testing.assert_array_equal(decoded["png"], RGB)


def test_encoding_an_unknown_extension_of_a_non_bytes_value_is_refused():
    with pytest.raises(ValueError, match="no encoder"):
        encode_field("xyz", 3)
    assert encode_field("xyz", b"b") == b"b" and encode_field("xyz", "s") == b"s"
