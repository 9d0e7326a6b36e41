"""pfio head, tail, md5sum and du: local files, mem://, zip members and S3."""

import hashlib
import zlib

import pytest

import pfio
from pfio.cli import main, read


@pytest.fixture
def text(tmp_path, lines):
    path = tmp_path / "lines.txt"
    path.write_bytes(b"".join(lines))
    return path


def _out(capsysbinary):
    return capsysbinary.readouterr().out


# -- head ---------------------------------------------------------------------------------

def test_head_prints_the_first_10_lines(text, lines, capsysbinary):
    assert main(["head", str(text)]) == 0
    assert _out(capsysbinary) == b"".join(lines[:10])


def test_head_n(text, lines, capsysbinary):
    assert main(["head", "-n", "3", str(text)]) == 0
    assert _out(capsysbinary) == b"".join(lines[:3])


def test_head_n_0_prints_nothing(text, capsysbinary):
    assert main(["head", "-n", "0", str(text)]) == 0
    assert _out(capsysbinary) == b""


def test_head_c_counts_bytes(text, capsysbinary):
    assert main(["head", "-c", "9", str(text)]) == 0
    assert _out(capsysbinary) == b"line 1\nli"


def test_head_more_lines_than_the_file_has(tmp_path, capsysbinary):
    (tmp_path / "short").write_bytes(b"one\ntwo")
    assert main(["head", "-n", "50", str(tmp_path / "short")]) == 0
    assert _out(capsysbinary) == b"one\ntwo"


def test_head_of_several_files_heads_each(text, tmp_path, capsysbinary):
    (tmp_path / "two").write_bytes(b"2\n")
    assert main(["head", "-n", "1", str(text), str(tmp_path / "two")]) == 0
    assert _out(capsysbinary) == (f"==> {text} <==\nline 1\n\n==> {tmp_path / 'two'} <==\n2\n"
                                  ).encode()


def test_head_reports_a_missing_file_and_goes_on(text, tmp_path, capsysbinary):
    assert main(["head", "-n", "1", str(tmp_path / "missing"), str(text)]) == 1
    captured = capsysbinary.readouterr()
    assert captured.out.endswith(b"line 1\n")
    assert captured.err.startswith(b"pfio head: No such file or directory")
    assert captured.err.count(b"\n") == 1


def test_head_of_a_zip_member(zip_path, lines, capsysbinary):
    assert main(["head", "-n", "2", str(zip_path / "lines.txt")]) == 0
    assert _out(capsysbinary) == b"".join(lines[:2])


def test_head_lines_and_bytes_exclude_each_other(text, capsys):
    assert main(["head", "-n", "1", "-c", "1", str(text)]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_head_refuses_a_negative_count(text, capsys):
    assert main(["head", "-n=-3", str(text)]) == 2
    assert "must not be negative" in capsys.readouterr().err


# -- tail ---------------------------------------------------------------------------------

def test_tail_prints_the_last_10_lines(text, lines, capsysbinary):
    assert main(["tail", str(text)]) == 0
    assert _out(capsysbinary) == b"".join(lines[-10:])


def test_tail_n_without_a_final_newline(tmp_path, capsysbinary):
    (tmp_path / "f").write_bytes(b"a\nb\nc")
    assert main(["tail", "-n", "2", str(tmp_path / "f")]) == 0
    assert _out(capsysbinary) == b"b\nc"


def test_tail_more_lines_than_the_file_has(tmp_path, capsysbinary):
    (tmp_path / "f").write_bytes(b"a\nb\n")
    assert main(["tail", "-n", "5", str(tmp_path / "f")]) == 0
    assert _out(capsysbinary) == b"a\nb\n"


def test_tail_of_an_empty_file(tmp_path, capsysbinary):
    (tmp_path / "f").write_bytes(b"")
    assert main(["tail", str(tmp_path / "f")]) == 0
    assert _out(capsysbinary) == b""


def test_tail_c(text, capsysbinary):
    assert main(["tail", "-c", "8", str(text)]) == 0
    assert _out(capsysbinary) == b"line 20\n"


def test_tail_c_beyond_the_start(tmp_path, capsysbinary):
    (tmp_path / "f").write_bytes(b"abc")
    assert main(["tail", "-c", "10", str(tmp_path / "f")]) == 0
    assert _out(capsysbinary) == b"abc"


def test_tail_reads_back_block_by_block(tmp_path, monkeypatch, capsysbinary):
    monkeypatch.setattr(read, "TAIL_BLOCK", 7)
    long_lines = [b"%03d" % i + b"-" * 20 + b"\n" for i in range(40)]
    (tmp_path / "f").write_bytes(b"".join(long_lines))
    assert main(["tail", "-n", "3", str(tmp_path / "f")]) == 0
    assert _out(capsysbinary) == b"".join(long_lines[-3:])


def test_tail_of_a_deflated_zip_member(zip_path, lines, capsysbinary):
    assert main(["tail", "-n", "1", str(zip_path / "lines.txt")]) == 0
    assert _out(capsysbinary) == lines[-1]


def test_tail_of_a_stored_zip_member(zip_path, capsysbinary):
    assert main(["tail", "-c", "3", str(zip_path / "dir" / "raw.bin")]) == 0
    assert _out(capsysbinary) == bytes([197, 198, 199])


def test_tail_of_a_directory_fails(tmp_path, capsysbinary):
    assert main(["tail", str(tmp_path)]) == 1
    assert capsysbinary.readouterr().err.startswith(b"pfio tail: ")


# -- md5sum -------------------------------------------------------------------------------

def test_md5sum_prints_digest_and_url(text, capsys):
    assert main(["md5sum", str(text)]) == 0
    expected = hashlib.md5(text.read_bytes()).hexdigest()
    assert capsys.readouterr().out == f"{expected}  {text}\n"


@pytest.mark.parametrize("algorithm", ["sha1", "sha256"])
def test_md5sum_other_hashes(text, capsys, algorithm):
    assert main(["md5sum", "--algorithm", algorithm, str(text)]) == 0
    expected = hashlib.new(algorithm, text.read_bytes()).hexdigest()
    assert capsys.readouterr().out.split() == [expected, str(text)]


def test_md5sum_crc32(text, capsys):
    assert main(["md5sum", "-a", "crc32", str(text)]) == 0
    assert capsys.readouterr().out.split()[0] == f"{zlib.crc32(text.read_bytes()):08x}"


def test_md5sum_crc32c_check_value(tmp_path, capsys):
    pytest.importorskip("awscrt")
    (tmp_path / "f").write_bytes(b"123456789")
    assert main(["md5sum", "-a", "crc32c", str(tmp_path / "f")]) == 0
    assert capsys.readouterr().out.split()[0] == "e3069283"  # CRC-32C's check value


def test_md5sum_unknown_algorithm_is_a_usage_error(text, capsys):
    assert main(["md5sum", "-a", "sha3", str(text)]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_md5sum_of_a_zip_member_and_of_the_zip(zip_path, lines, capsys):
    assert main(["md5sum", str(zip_path / "lines.txt"), str(zip_path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"{hashlib.md5(b''.join(lines)).hexdigest()}  {zip_path / 'lines.txt'}",
                   f"{hashlib.md5(zip_path.read_bytes()).hexdigest()}  {zip_path}"]


def test_md5sum_of_a_mem_file(mem, capsys):
    with mem.open("f", "wb") as f:
        f.write(b"in memory")
    assert main(["md5sum", f"mem://{mem.name}/f"]) == 0
    captured = capsys.readouterr()
    assert captured.out.split()[0] == hashlib.md5(b"in memory").hexdigest()
    assert "mem://" in captured.err  # the warning that the store lives in this process


def test_md5sum_of_a_directory_fails_and_goes_on(tmp_path, text, capsys):
    assert main(["md5sum", str(tmp_path), str(text)]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("pfio md5sum: ")
    assert captured.out.split()[1] == str(text)


# -- du -----------------------------------------------------------------------------------

def test_du_prints_each_directory_deepest_first_then_the_total(tree, capsys):
    assert main(["du", str(tree)]) == 0
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows == [["0", f"{tree}/empty"], ["5", f"{tree}/sub/deeper"],
                    ["10245", f"{tree}/sub"], ["10251", str(tree)]]


def test_du_s_prints_the_total_only(tree, capsys):
    assert main(["du", "-s", str(tree)]) == 0
    assert capsys.readouterr().out == f"10251\t{tree}\n"


def test_du_h_is_human_readable(tree, capsys):
    assert main(["du", "-sh", str(tree)]) == 0
    assert capsys.readouterr().out == f"10K\t{tree}\n"


def test_du_help_is_still_there(capsys):
    assert main(["du", "--help"]) == 0
    assert "--human-readable" in capsys.readouterr().out


def test_du_of_a_file(tree, capsys):
    assert main(["du", str(tree / "a.txt")]) == 0
    assert capsys.readouterr().out == f"6\t{tree / 'a.txt'}\n"


def test_du_of_a_zip_counts_its_members(zip_path, capsys):
    assert main(["du", str(zip_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [f"203\t{zip_path}/dir",
                                                    f"354\t{zip_path}"]


def test_du_of_a_missing_directory(tmp_path, capsys):
    assert main(["du", str(tmp_path / "missing")]) == 1
    assert capsys.readouterr().err.startswith("pfio du: ")


@pytest.mark.parametrize("size, shown", [(0, "0"), (1023, "1023"), (1536, "1.5K"),
                                         (20 << 20, "20M"), (3 << 30, "3.0G")])
def test_human_sizes(size, shown):
    from pfio.cli.common import human_size

    assert human_size(size) == shown


# -- S3 -----------------------------------------------------------------------------------

def test_head_tail_md5sum_du_on_s3(s3_env, s3_bucket, lines, capsysbinary):
    data = b"".join(lines)
    with pfio.open_url(f"s3://{s3_bucket}/logs/run.log", "wb") as f:
        f.write(data)
    with pfio.open_url(f"s3://{s3_bucket}/logs/old/a.log", "wb") as f:
        f.write(b"12345")
    url = f"s3://{s3_bucket}/logs/run.log"
    assert main(["head", "-n", "2", url]) == 0
    assert _out(capsysbinary) == b"".join(lines[:2])
    assert main(["tail", "-n", "2", url]) == 0
    assert _out(capsysbinary) == b"".join(lines[-2:])
    assert main(["md5sum", url]) == 0
    assert _out(capsysbinary).split()[0].decode() == hashlib.md5(data).hexdigest()
    assert main(["du", f"s3://{s3_bucket}/logs"]) == 0
    assert _out(capsysbinary).decode().splitlines() == [
        f"5\ts3://{s3_bucket}/logs/old", f"{len(data) + 5}\ts3://{s3_bucket}/logs"]


def test_tail_of_a_zip_on_s3(s3_env, s3_bucket, zip_path, lines, capsysbinary):
    with pfio.open_url(f"s3://{s3_bucket}/data.zip", "wb") as f:
        f.write(zip_path.read_bytes())
    assert main(["tail", "-n", "1", f"s3://{s3_bucket}/data.zip/lines.txt"]) == 0
    assert _out(capsysbinary) == lines[-1]
