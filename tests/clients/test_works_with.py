"""README's "Works with" table (the rows of Chainer, pytorch-pfn-extras, NumPy and the
standard library) is what the client tests show: each row names the tests that pin it, and
they exist (the suite runs them)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN = "<!-- works-with: Chainer, pytorch-pfn-extras, NumPy, standard library (begin) -->"
END = "<!-- works-with: Chainer, pytorch-pfn-extras, NumPy, standard library (end) -->"

C, P, N = "tests/clients/test_chainer.py", "tests/clients/test_ppe.py", \
    "tests/clients/test_numpy.py"
A, OS_ = "tests/clients/test_stdlib_archives.py", "tests/clients/test_os.py"
S, D = "tests/patches/test_spooled_open.py", "tests/patches/test_made_directories.py"

#: (library, call) -> (status, the tests that pin the row)
ROWS = {
    ("Chainer 7.8", "`Trainer(out=url)` + `extensions.snapshot()`"):
        ("works", [f"{C}::test_snapshot_extension_writes_to_s3"]),
    ("Chainer 7.8", "`extensions.snapshot(autoload=True, n_retains=n)`"):
        ("works", [f"{C}::test_snapshots_are_retained_and_autoloaded_from_s3",
                   f"{C}::test_autoload_choice_of_one_second_is_the_highest_number"]),
    ("Chainer 7.8", "`extensions.LogReport()`"):
        ("works", [f"{C}::test_log_report_writes_to_s3"]),
    ("Chainer 7.8", "`serializers.save_npz(url)`, `load_npz(url)`"):
        ("works", [f"{C}::test_save_npz_and_load_npz_on_s3"]),
    ("pytorch-pfn-extras", "`ExtensionsManager(out_dir=url)` + `extensions.snapshot()`"):
        ("works", [f"{P}::test_default_writer_writes_snapshots_to_s3"]),
    ("pytorch-pfn-extras", "`extensions.snapshot(autoload=True, n_retains=n)`"):
        ("works", [f"{P}::test_default_writer_retains_and_autoloads_the_latest",
                   f"{P}::test_autoload_picks_the_latest_of_one_second",
                   f"{P}::test_patched_choice_of_one_second_is_the_highest_number"]),
    ("pytorch-pfn-extras", "`extensions.LogReport()`"):
        ("works", [f"{P}::test_log_report_writes_to_s3"]),
    ("pytorch-pfn-extras", "`snapshot(writer=pfio.integrations.ppe.snapshot_writer(url))`"):
        ("works", [f"{P}::test_pfio_writer_autoloads_the_latest_of_one_second_without_patches",
                   f"{P}::test_pfio_writer_choice_of_one_second_is_the_highest_number"]),
    ("NumPy", "`load` of an `.npz`"):
        ("works", [f"{N}::test_load_of_an_npz_is_an_npzfile",
                   f"{N}::test_npzfile_close_closes_the_remote_file"]),
    ("NumPy", "`save`, `savez`, `savez_compressed`, `load`"):
        ("works", [f"{N}::test_save_and_load_npy",
                   f"{N}::test_savez_appends_npz_and_savez_compressed_compresses",
                   f"{N}::test_savez_that_fails_writes_nothing"]),
    ("NumPy", "`savetxt`, `loadtxt`, `genfromtxt`"):
        ("works", [f"{N}::test_savetxt_loadtxt_genfromtxt",
                   f"{N}::test_savetxt_of_a_gz_name_is_gzip", f"{N}::test_paths_by_keyword"]),
    ("tarfile", "`tarfile.open(url, mode)`, `is_tarfile`"):
        ("works", [f"{A}::test_tarfile_open_reads_a_url", f"{A}::test_tarfile_open_writes_a_url",
                   f"{A}::test_tarfile_is_tarfile_of_a_url"]),
    ("gzip, bz2, lzma", "`open(url, mode)`, `GzipFile`/`BZ2File`/`LZMAFile(url)`"):
        ("works", [f"{A}::test_compression_open_reads_and_writes_a_url",
                   f"{A}::test_compression_file_classes_take_a_url"]),
    ("zipfile", '`ZipFile(url, "r" / "w" / "a")`, `is_zipfile`'):
        ("works", [f"{A}::test_zipfile_writes_and_reads_a_url",
                   f"{A}::test_zipfile_appends_to_a_url"]),
    ("builtins", '`open(url, "w")`, `os.fsync(f.fileno())`'):
        ("works", [f"{S}::test_fsync_of_the_file_descriptor_then_publish_on_close",
                   f"{S}::test_a_large_file_streams_and_then_has_no_descriptor",
                   f"{S}::test_a_file_whose_descriptor_was_given_out_stays_local",
                   f"{S}::test_an_exception_in_the_block_publishes_nothing"]),
    ("builtins", '`open(url, "r+b")`, `open(url, "w+b")`'):
        ("works", [f"{S}::test_r_plus_updates_a_copy_of_the_object",
                   f"{S}::test_w_plus_reads_back_and_seeks"]),
    ("tensorboardX", "`SummaryWriter(url)`, `add_scalar`, `flush`"):
        ("works", ["tests/clients/test_tensorboardx.py::"
                   "test_summary_writer_flushes_with_fsync_and_publishes_on_close"]),
    ("builtins", '`open(url, "a")` on S3'):
        ("refused", [f"{S}::test_append_names_the_workaround_where_objects_cannot_grow"]),
    ("tempfile, shutil", "`mkdtemp(dir=url)`, write, `shutil.move` out, `shutil.rmtree`"):
        ("works", [f"{D}::test_mkdtemp_write_move_out_rmtree",
                   f"{D}::test_rmtree_of_an_empty_made_directory"]),
    ("shutil", '`copy(local, "s3://b/dir/")`'):
        ("works", [f"{D}::test_copy_to_a_made_directory_with_a_slash_writes_under_it",
                   f"{D}::test_copy_to_a_missing_directory_with_a_slash_raises_as_on_local_disk"]),
    ("os", "`access`, `lstat`, `path.lexists`, `path.islink`, `path.abspath`"):
        ("works", [f"{OS_}::test_access_of_a_file_a_directory_and_nothing",
                   f"{OS_}::test_access_inside_an_archive_is_read_only",
                   f"{OS_}::test_lexists_lstat_islink",
                   f"{OS_}::test_abspath_of_a_url_is_the_url"]),
    ("os", "`open`, `os.*`, `os.path.*`, `shutil.*` with an `os.PathLike`"):
        ("works", [f"{OS_}::test_a_dir_entry_of_scandir_opens_and_stats",
                   f"{OS_}::test_path_like_urls_in_open_os_and_shutil",
                   f"{OS_}::test_path_like_urls_in_library_calls"]),
    ("pathlib", '`pathlib.Path("s3://b/k")`'):
        ("refused", [f"{OS_}::test_pathlib_collapses_the_scheme_so_use_str_urls_or_pfio_path"]),
    ("subprocess", '`subprocess.run([sys.executable, "tool.py"])` from a patched script'):
        ("unpatched", ["tests/patches/test_startup_hook.py::"
                       "test_a_patched_script_patches_its_workers_not_its_subprocesses"]),
}


def _table():
    text = (ROOT / "README.md").read_text()
    block = text[text.index(BEGIN) + len(BEGIN):text.index(END)]
    rows = [re.split(r"(?<!\\)\|", line.strip())[1:-1] for line in block.strip().splitlines()]
    assert [c.strip() for c in rows[0]] == ["Library", "Call", "Status", "Note"]
    return {(lib.strip(), call.strip()): status.strip() for lib, call, status, _ in rows[2:]}


def _functions(path):
    return {node.name for node in ast.walk(ast.parse((ROOT / path).read_text()))
            if isinstance(node, ast.FunctionDef)}


def test_the_table_has_the_rows_and_statuses_the_tests_pin():
    assert _table() == {key: status for key, (status, _) in ROWS.items()}


def test_every_row_names_tests_that_exist():
    missing = [test for _, tests in ROWS.values() for test in tests
               if test.split("::")[1] not in _functions(test.split("::")[0])]
    assert missing == []
