"""The one tar header reader (pfio.containers.tar_format): what it reads agrees with
:mod:`tarfile`, through both of its sources (seeking over the data for the container's
index, reading on for the shard stream)."""

import io
import tarfile

import pytest

from pfio.containers.tar_format import SPARSE, iter_tar, read_members
from pfio.containers.tar_sources import Chunks, Seeking
from pfio.errors import ArchiveError

MTIME = 1_600_000_000
FORMATS = {"ustar": tarfile.USTAR_FORMAT, "gnu": tarfile.GNU_FORMAT, "pax": tarfile.PAX_FORMAT}


def _info(name, kind=tarfile.REGTYPE, size=0, linkname="", mtime=MTIME):
    info = tarfile.TarInfo(name)
    info.type, info.size, info.linkname, info.mtime = kind, size, linkname, mtime
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o640
    return info


def _archive(entries, fmt=tarfile.PAX_FORMAT):
    """``entries``: (TarInfo, data or None) in order."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tf:
        for info, data in entries:
            tf.addfile(info, None if data is None else io.BytesIO(data))
    return out.getvalue()


def _mixed(fmt):
    entries = [(_info("dir", tarfile.DIRTYPE), None),
               (_info("dir/a.txt", size=5), b"alpha"),
               (_info("d" * 60 + "/" + "e" * 60 + "/" + "f" * 90, size=1500),  # ustar's prefix
                bytes(range(250)) * 6),
               (_info("empty"), b""),
               (_info("hard", tarfile.LNKTYPE, linkname="dir/a.txt"), None),
               (_info("sym", tarfile.SYMTYPE, linkname="../t"), None),
               (_info("fifo", tarfile.FIFOTYPE), None),
               (_info("dev", tarfile.CHRTYPE), None)]
    if fmt != tarfile.USTAR_FORMAT:  # names, links and times ustar cannot hold
        long_dir = "/".join(["d" * 60] * 3)
        entries += [(_info("データ/ünï.txt", size=1), b"u"),
                    (_info(long_dir + "/" + "f" * 120 + ".bin", size=2), b"xx"),
                    (_info("long", tarfile.SYMTYPE, linkname="../" + "t" * 110), None),
                    (_info("later", size=3, mtime=MTIME + 0.5), b"abc")]
    return _archive(entries, fmt)


def _tarfile_view(data):
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        return [(m.name, m.type, m.size, m.offset, m.offset_data, float(m.mtime), m.mode,
                 m.linkname) for m in tf.getmembers()]


def _view(members):
    return [(m.name, m.kind, m.size, m.position, m.offset, m.mtime, m.mode, m.linkname)
            for m in members]


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_headers_read_as_tarfile_reads_them(fmt):
    data = _mixed(FORMATS[fmt])
    members = list(read_members(Seeking(io.BytesIO(data)), "a.tar"))
    assert _view(members) == _tarfile_view(data)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_data_read_on_is_what_tarfile_extracts(fmt):
    data = _mixed(FORMATS[fmt])
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        expected = {m.name: tf.extractfile(m).read() for m in tf.getmembers() if m.isreg()}
    got = {m.name: m.data for m in iter_tar(io.BytesIO(data), "a.tar")}
    assert got == expected


def test_members_end_where_the_next_header_starts():
    data = _mixed(tarfile.PAX_FORMAT)
    members = list(read_members(Chunks(io.BytesIO(data)), "a.tar", with_data=True))
    assert [m.position for m in members[1:]] == [m.end for m in members[:-1]]


def test_a_global_pax_header_applies_to_every_later_member():
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT,
                      pax_headers={"mtime": "1234.5"}) as tf:
        for name in ("a", "b"):
            tf.addfile(_info(name, size=1), io.BytesIO(b"1"))
    members = list(read_members(Seeking(io.BytesIO(out.getvalue())), "a.tar"))
    assert [m.mtime for m in members] == [1234.5, 1234.5]
    assert members[0].position == 0  # the global header is read again to get it


def test_a_pax_linkpath_and_a_gnu_long_link_name_the_target():
    target = "t/" + "x" * 120
    for fmt in (tarfile.PAX_FORMAT, tarfile.GNU_FORMAT):
        data = _archive([(_info("s", tarfile.SYMTYPE, linkname=target), None)], fmt)
        (member,) = read_members(Seeking(io.BytesIO(data)), "a.tar")
        assert member.linkname == target


def test_a_directory_with_a_size_has_no_data_as_tarfile_reads_it():
    data = _archive([(_info("d", tarfile.DIRTYPE, size=5000), None),
                     (_info("f", size=2), b"ok")], tarfile.USTAR_FORMAT)
    assert [m.name for m in iter_tar(io.BytesIO(data), "a.tar")] == ["f"]
    assert _view(read_members(Seeking(io.BytesIO(data)), "a.tar")) == _tarfile_view(data)


# -- sparse members: recognised, their real size listed, their data skipped -----------------

def _checksummed(block):
    block = bytearray(block)
    block[148:156] = b" " * 8
    block[148:156] = b"%06o\0 " % (sum(block))
    return bytes(block)


def _old_gnu_sparse(stored=1024, real=1 << 20):
    """An old GNU sparse header with one extension block, its data, then a member."""
    header = bytearray(_info("sp", SPARSE, size=stored).tobuf(tarfile.GNU_FORMAT,
                                                                "utf-8", "surrogateescape"))
    header[482] = 1  # an extension block follows
    header[483:495] = b"%011o\0" % real
    extension = bytearray(tarfile.BLOCKSIZE)
    extension[0:24] = b"%011o\0%011o\0" % (4096, 512)
    rest = _archive([(_info("after", size=3), b"abc")], tarfile.GNU_FORMAT)
    return _checksummed(header) + bytes(extension) + bytes(stored) + rest


def test_an_old_gnu_sparse_member_with_extension_blocks():
    data = _old_gnu_sparse()
    members = list(read_members(Seeking(io.BytesIO(data)), "a.tar"))
    assert [(m.name, m.kind, m.size) for m in members] == [
        ("sp", SPARSE, 1 << 20), ("after", tarfile.REGTYPE, 3)]
    assert _view(members) == _tarfile_view(data)


def test_a_pax_sparse_member():
    sparse = _info("GNUSparseFile.0/real", size=512)
    sparse.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                          "GNU.sparse.name": "real", "GNU.sparse.realsize": "5000"}
    data = _archive([(sparse, b"1\n0\n5000\n".ljust(512, b"\0")),
                     (_info("after", size=3), b"abc")])
    members = list(read_members(Seeking(io.BytesIO(data)), "a.tar"))
    assert [(m.name, m.kind, m.size) for m in members] == [
        ("real", SPARSE, 5000), ("after", tarfile.REGTYPE, 3)]
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        assert [(m.name, m.size, m.issparse()) for m in tf.getmembers()] == [
            ("real", 5000, True), ("after", 3, False)]


def test_the_stream_refuses_a_sparse_member():
    with pytest.raises(ArchiveError, match="a.tar.*'sp'.*sparse"):
        list(iter_tar(io.BytesIO(_old_gnu_sparse()), "a.tar"))


# -- damage, through both sources ------------------------------------------------------------

SOURCES = {"seeking": Seeking, "chunks": Chunks}


@pytest.mark.parametrize("source", list(SOURCES))
def test_an_extended_header_cut_short(source):
    data = _archive([(_info("x" * 300, size=1), b"1")], tarfile.GNU_FORMAT)
    with pytest.raises(ArchiveError, match="a.tar: truncated tar archive.*offset 0"):
        list(read_members(SOURCES[source](io.BytesIO(data[:700])), "a.tar"))


@pytest.mark.parametrize("source", list(SOURCES))
def test_an_extended_header_without_its_member(source):
    data = _archive([(_info("x" * 300, size=1), b"1")], tarfile.GNU_FORMAT)
    with pytest.raises(ArchiveError, match="extended header at offset 0 is not followed"):
        list(read_members(SOURCES[source](io.BytesIO(data[:1024])), "a.tar"))
    with pytest.raises(ArchiveError, match="extended header at offset 0 is followed by the end"):
        list(read_members(SOURCES[source](io.BytesIO(data[:1024] + bytes(1024))), "a.tar"))


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_corrupt_pax_record(source):
    data = bytearray(_archive([(_info("é", size=1), b"1")]))
    data[512:515] = b"999"  # the length of the first record: beyond the header's data
    with pytest.raises(ArchiveError, match="a.tar: corrupt pax header at offset 0"):
        list(read_members(SOURCES[source](io.BytesIO(bytes(data))), "a.tar"))


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_pax_size_that_is_not_a_number(source):
    info = _info("a", size=1)
    info.pax_headers = {"size": "1x"}  # tarfile would read it as 0 and misplace what follows
    data = _archive([(info, b"1")])
    with pytest.raises(ArchiveError, match="a.tar: corrupt pax size '1x' at offset 1024"):
        list(read_members(SOURCES[source](io.BytesIO(data)), "a.tar"))


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_corrupt_first_header_says_not_a_tar(source):
    data = bytearray(_archive([(_info("a", size=1), b"1")], tarfile.USTAR_FORMAT))
    data[10] ^= 0xFF  # the checksum no longer matches
    with pytest.raises(ArchiveError, match="a.tar: not a tar archive.*offset 0.*checksum"):
        list(read_members(SOURCES[source](io.BytesIO(bytes(data))), "a.tar"))


def test_a_missing_end_block_is_an_error_only_where_it_is_required():
    data = _archive([(_info("a", size=1), b"1")], tarfile.USTAR_FORMAT)[:1024]
    assert [m.name for m in read_members(Seeking(io.BytesIO(data)), "a.tar",
                                          require_end=False)] == ["a"]
    with pytest.raises(ArchiveError, match="no end-of-archive block"):
        list(read_members(Chunks(io.BytesIO(data)), "a.tar"))


def test_reading_stops_at_a_header_boundary():
    data = _archive([(_info(n, size=600), n.encode() * 600) for n in "abc"])
    second = 512 + 1024
    members = list(iter_tar(io.BytesIO(data[second:second + 1536]), "a.tar", start=second,
                              stop=second + 1536))
    assert [(m.name, m.position, m.end) for m in members] == [("b", second, second + 1536)]


# -- the fast header decoding ----------------------------------------------------------------

@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
@pytest.mark.parametrize("name", ["a.jpg", "dir/" + "p" * 120 + "/x.cls", "d/", "é.txt"])
def test_headers_decode_as_tarfile_decodes_them(fmt, name):
    from pfio.containers.tar_format import _header

    info = tarfile.TarInfo(name)
    info.size = 0 if name.endswith("/") else 12345
    info.type = tarfile.DIRTYPE if name.endswith("/") else tarfile.REGTYPE
    block = info.tobuf(fmt, "utf-8", "surrogateescape")[-tarfile.BLOCKSIZE:]
    expected = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
    assert _header(block, "x.tar", 0) == (expected.type, expected.size, expected.name)


def test_a_base_256_size_is_read_through_tarfile():
    from pfio.containers.tar_format import _header

    info = tarfile.TarInfo("big.bin")
    info.size = 9 * 8**11  # more than 11 octal digits hold: GNU's base-256 size
    block = info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")
    assert _header(block, "x.tar", 0) == (tarfile.REGTYPE, info.size, "big.bin")


@pytest.mark.parametrize("seed", range(5))
def test_the_checksum_sum_is_the_sum_of_the_bytes(seed):
    import random

    from pfio.containers.tar_format import _byte_sum

    rng = random.Random(seed)
    blocks = [bytes(512), b"\xff" * 512, b"\x01" + bytes(511)]
    blocks += [bytes(rng.choice([0, 0x30, 0x37, 0xFF, rng.randrange(256)]) for _ in range(512))
               for _ in range(2000)]
    assert [_byte_sum(b) for b in blocks] == [sum(b) for b in blocks]
