"""``pfio.v2.Zip`` as PFIO 2.10 code drives it: ``local.open_zip(...)`` and ``from_url``,
then ``list``, ``exists``, ``isdir``, ``stat`` and ``open`` with the spellings PFIO's
users write (doubled slashes, ``..``, a leading ``/``)."""

from __future__ import annotations

import logging
import stat
import zipfile
from datetime import datetime

import pytest

import pfio
from pfio.v2 import ZipFileStat, local

# with directory entries: what ``zip -r`` and ``shutil.make_archive`` write
WITH_DIRS = {"photos/": None, "photos/cat.jpg": b"meow", "photos/2024/": None,
             "photos/2024/dog.jpg": b"woof", "notes.txt": b"hello\n"}
# without: what ``zip -rD`` writes (directories only implied by the members' names)
WITHOUT_DIRS = {"photos/cat.jpg": b"meow", "photos/2024/dog.jpg": b"woof",
                "notes.txt": b"hello\n"}


def _write(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            if data is None:
                z.mkdir(name.rstrip("/"))
            else:
                z.writestr(name, data)
    return str(path)


@pytest.fixture
def with_dirs(tmp_path):
    return _write(tmp_path / "with.zip", WITH_DIRS)


@pytest.fixture
def without_dirs(tmp_path):
    return _write(tmp_path / "without.zip", WITHOUT_DIRS)


@pytest.fixture(params=["with_dirs", "without_dirs"])
def either(request):
    return request.getfixturevalue(request.param)


# -- list ----------------------------------------------------------------------------------

def test_list_names_directories_without_a_trailing_slash(either):
    with local.open_zip(either) as z:
        assert sorted(z.list()) == ["notes.txt", "photos"]
        assert sorted(z.list("photos")) == ["2024", "cat.jpg"]


def test_recursive_list_names_explicit_directory_entries_without_a_slash(with_dirs):
    with local.open_zip(with_dirs) as z:
        assert sorted(z.list(recursive=True)) == [
            "notes.txt", "photos", "photos/2024", "photos/2024/dog.jpg", "photos/cat.jpg"]
        assert sorted(z.list("photos", recursive=True)) == ["2024", "2024/dog.jpg", "cat.jpg"]


def test_recursive_list_of_an_archive_without_directory_entries_names_files_only(
        without_dirs):
    with local.open_zip(without_dirs) as z:
        assert sorted(z.list(recursive=True)) == [
            "notes.txt", "photos/2024/dog.jpg", "photos/cat.jpg"]
        assert sorted(z.list("photos", recursive=True)) == ["2024/dog.jpg", "cat.jpg"]


@pytest.mark.parametrize("spelling", ["photos//", "photos/cat.jpg//../", "notes.txt/../photos",
                                      "/photos", "photos/2024/.."])
def test_list_takes_unnormalised_spellings_of_a_directory(either, spelling):
    with local.open_zip(either) as z:
        assert sorted(z.list(spelling)) == ["2024", "cat.jpg"]


@pytest.mark.parametrize("spelling", ["", "/", "//..//", "photos//..//", "photos/../../.."])
def test_spellings_of_the_top_list_the_top(either, spelling):
    with local.open_zip(either) as z:
        assert sorted(z.list(spelling)) == ["notes.txt", "photos"]


@pytest.mark.parametrize("spelling", ["does_not_exist", "p", "phot/", "photos//c/",
                                      "does/not/exist"])
def test_list_of_a_missing_directory_is_file_not_found(either, spelling):
    with local.open_zip(either) as z:
        for recursive in (False, True):
            with pytest.raises(FileNotFoundError):
                list(z.list(spelling, recursive=recursive))


@pytest.mark.parametrize("spelling", ["notes.txt", "photos//cat.jpg///"])
def test_list_of_a_file_is_not_a_directory_error(either, spelling):
    with local.open_zip(either) as z:
        for recursive in (False, True):
            with pytest.raises(NotADirectoryError):
                list(z.list(spelling, recursive=recursive))


def test_recursive_detail_listing_gives_a_zip_file_stat_per_member(either):
    with local.open_zip(either) as z:
        stats = list(z.list(recursive=True, detail=True))
        assert sorted(st.filename for st in stats) == sorted(z.list(recursive=True))
        assert all(isinstance(st, ZipFileStat) for st in stats)


def test_a_listed_stat_keeps_the_members_own_name(with_dirs):
    with local.open_zip(with_dirs) as z:
        names = {st.filename: st.orig_filename for st in z.list("photos", detail=True)}
    assert names == {"cat.jpg": "photos/cat.jpg", "2024": "photos/2024/"}


# -- exists, isdir, stat ---------------------------------------------------------------------

@pytest.mark.parametrize("spelling, is_dir", [
    ("photos", True), ("photos//", True), ("photos/cat.jpg//../", True),
    ("photos//cat.jpg", False), ("notes.txt//..//photos/cat.jpg", False), ("/notes.txt", False),
])
def test_exists_and_isdir_take_unnormalised_spellings(either, spelling, is_dir):
    with local.open_zip(either) as z:
        assert z.exists(spelling)
        assert z.isdir(spelling) is is_dir


@pytest.mark.parametrize("spelling", ["does_not_exist", "does_not_exist/", "does/not/exist",
                                      "photos/cat.jp", "photos/cat.jpg/x"])
def test_missing_names_neither_exist_nor_are_directories(either, spelling):
    with local.open_zip(either) as z:
        assert not z.exists(spelling) and not z.isdir(spelling)
        with pytest.raises(FileNotFoundError):
            z.stat(spelling)


@pytest.mark.parametrize("spelling", ["", "/", "//..//", "photos//..//"])
def test_the_top_of_an_archive_is_a_directory(either, spelling):
    # a deliberate difference: PFIO 2.10 answered False and FileNotFoundError here while it
    # listed the top; pfio's top is a directory on every filesystem (README, "Coming from
    # PFIO 2.x")
    with local.open_zip(either) as z:
        assert z.exists(spelling) and z.isdir(spelling) and z.stat(spelling).isdir()


def test_stat_of_a_directory_entry_is_a_zip_file_stat_named_as_the_archive_names_it(
        with_dirs):
    info = zipfile.ZipFile(with_dirs).getinfo("photos/2024/")
    with local.open_zip(with_dirs) as z:
        for spelling in ("photos/2024", "photos//2024//", "photos/cat.jpg/../2024"):
            st = z.stat(spelling)
            assert isinstance(st, ZipFileStat) and st.isdir()
            assert st.filename == st.orig_filename == "photos/2024/"
            assert st.mode == info.external_attr >> 16 and st.size == 0


def test_zip_file_stat_carries_the_zipinfo_fields_pfio2_copied(with_dirs):
    info = zipfile.ZipFile(with_dirs).getinfo("photos/2024/dog.jpg")
    with local.open_zip(with_dirs) as z:
        st = z.stat("photos//2024/dog.jpg")
    for field in ("filename", "orig_filename", "comment", "create_system", "create_version",
                  "extract_version", "flag_bits", "volume", "internal_attr", "external_attr",
                  "CRC", "header_offset", "compress_size", "compress_type"):
        assert getattr(st, field) == getattr(info, field), field
    # the mode has a file type even where the archive recorded permissions only
    assert st.size == info.file_size and st.mode == stat.S_IFREG | info.external_attr >> 16
    assert st.last_modified == datetime(*info.date_time).timestamp()
    assert not st.isdir()


def test_member_comments_are_read_from_the_central_directory(tmp_path):
    path = str(tmp_path / "c.zip")
    with zipfile.ZipFile(path, "w") as z:
        info = zipfile.ZipInfo("a.txt")
        info.comment = b"first member"
        z.writestr(info, b"a")
        z.writestr("b.txt", b"b")
    with local.open_zip(path) as z:
        assert z.stat("a.txt").comment == b"first member"
        assert z.stat("b.txt").comment == b""


def test_members_written_by_pfio_have_zipinfo_fields(tmp_path):
    path = str(tmp_path / "w.zip")
    with local.open_zip(path, "w") as z:
        with z.open("x.txt", "wb") as f:
            f.write(b"x")
        st = z.stat("x.txt")
        assert st.external_attr >> 16 == st.mode and st.comment == b""
    info = zipfile.ZipFile(path).getinfo("x.txt")
    with local.open_zip(path) as z:
        st = z.stat("x.txt")
        assert (st.create_system, st.external_attr) == (info.create_system, info.external_attr)


def test_asking_for_the_top_logs_no_warning(either, caplog):
    with caplog.at_level(logging.WARNING), local.open_zip(either) as z:
        assert sorted(z.list("/")) == sorted(z.list("//..//"))
        z.exists("/notes.txt")
    assert caplog.records == []


# -- open, fileobj --------------------------------------------------------------------------

def test_open_takes_unnormalised_spellings(either):
    with local.open_zip(either) as z:
        with z.open("././photos//../photos/cat.jpg", "rb") as f:
            assert f.read() == b"meow"
        with z.open("notes.txt") as f:
            assert f.read() == "hello\n"


def test_fileobj_is_the_archive_opened_on_its_filesystem(either):
    with local.open_zip(either) as z:
        assert zipfile.is_zipfile(z.fileobj)
        assert z.fileobj is z.fileobj


def test_every_member_a_recursive_listing_names_opens(either):
    with pfio.v2.from_url(either) as z:
        for name in z.list(recursive=True):
            if not z.isdir(name):
                with z.open(name, "rb") as f:
                    assert f.read() == WITH_DIRS[name]
