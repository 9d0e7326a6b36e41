"""README's one "Works with" table is what the client tests show: its rows and statuses are
the ones pinned here, every row but those ``not supported`` or ``not tested`` (whose notes
say why) names the tests that pin it, and those tests exist (the suite runs them)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BEGIN = "<!-- works-with: (begin) -->"
END = "<!-- works-with: (end) -->"

#: what a status means (README says it above the table)
STATUSES = {"works", "refused", "unpatched", "upstream bug", "not supported", "not tested"}
#: statuses whose rows pin no test of ours: the note says why
UNTESTED = {"not supported", "not tested"}

C, P, N = "tests/clients/test_chainer.py", "tests/clients/test_ppe.py", \
    "tests/clients/test_numpy.py"
A, OS_ = "tests/clients/test_stdlib_archives.py", "tests/clients/test_os.py"
S, D = "tests/patches/test_spooled_open.py", "tests/patches/test_made_directories.py"
LI, TB = "tests/clients/test_lightning.py", "tests/clients/test_tensorboardx.py"
PD, T, HF = "tests/clients/test_pandas.py", "tests/clients/test_torch.py", \
    "tests/clients/test_hf_datasets.py"

#: (library, call) -> (status, the tests that pin the row)
ROWS = {
    ("Chainer", "`Trainer(out=url)` + `extensions.snapshot()`"):
        ("works", [f"{C}::test_snapshot_extension_writes_to_s3"]),
    ("Chainer", "`extensions.snapshot(autoload=True, n_retains=n)`"):
        ("works", [f"{C}::test_snapshots_are_retained_and_autoloaded_from_s3",
                   f"{C}::test_autoload_choice_of_one_second_is_the_highest_number"]),
    ("Chainer", "`extensions.LogReport()`"):
        ("works", [f"{C}::test_log_report_writes_to_s3"]),
    ("Chainer", "`serializers.save_npz(url)`, `load_npz(url)`"):
        ("works", [f"{C}::test_save_npz_and_load_npz_on_s3"]),
    ("pytorch-pfn-extras", "`ExtensionsManager(out_dir=url)` + `extensions.snapshot()`"):
        ("works", [f"{P}::test_default_writer_writes_snapshots_to_s3"]),
    ("pytorch-pfn-extras", "`extensions.snapshot(autoload=True, n_retains=n)`"):
        ("works", [f"{P}::test_default_writer_retains_and_autoloads_the_latest",
                   f"{P}::test_autoload_picks_the_latest_of_one_second",
                   f"{P}::test_patched_choice_of_one_second_is_the_highest_number"]),
    ("pytorch-pfn-extras", "`extensions.LogReport()`"):
        ("works", [f"{P}::test_log_report_writes_to_s3"]),
    ("pytorch-pfn-extras",
     "`snapshot(writer=pfio.integrations.torch.ppe.snapshot_writer(url))`"):
        ("works", [f"{P}::test_pfio_writer_autoloads_the_latest_of_one_second_without_patches",
                   f"{P}::test_pfio_writer_choice_of_one_second_is_the_highest_number"]),
    ("Lightning", '`Trainer(default_root_dir="pfio://s3/b/run")` with its default logger'):
        ("works", [f"{LI}::test_default_logger_writes_its_event_file_to_s3",
                   f"{LI}::test_default_logger_writes_hparams_beside_its_events",
                   f"{LI}::test_nothing_lands_in_a_local_folder_named_after_the_url",
                   f"{LI}::test_a_run_under_patch_all_writes_the_same_files"]),
    ("Lightning", '`CSVLogger("pfio://s3/b/run")`'):
        ("works", [f"{LI}::test_csv_logger_appends_every_step_once",
                   f"{LI}::test_csv_logger_writes_hparams_first_thing",
                   f"{LI}::test_next_csv_logger_takes_the_next_version"]),
    ("Lightning", "`ModelCheckpoint`, `Model.load_from_checkpoint(url)`, "
                  "`trainer.fit(ckpt_path=url)`"):
        ("works", [f"{LI}::test_checkpoint_is_on_s3_and_loads_back",
                   f"{LI}::test_fit_resumes_from_a_checkpoint_on_s3",
                   f"{LI}::test_top_k_checkpoints_replace_each_other_and_last_is_kept"]),
    ("Lightning", "`TensorBoardLogger` with the `tensorboard` package installed"):
        ("not supported", []),
    ("Lightning", '`default_root_dir="s3://..."`'): ("not supported", []),
    ("tensorboardX", '`SummaryWriter("mem://...")` (a scheme of pfio\'s that tensorboardX does '
                     'not know) after `patch_all()`'):
        ("works", [f"{TB}::test_summary_writer_flushes_with_fsync_and_publishes_on_close"]),
    ("tensorboardX", '`SummaryWriter("pfio://s3/...")`'):
        ("works", [f"{TB}::test_summary_writer_on_a_pfio_url_writes_to_s3",
                   f"{TB}::test_event_file_is_published_at_each_flush_that_added_bytes",
                   f"{TB}::test_tensorboardx_imported_after_the_bridge_learns_the_scheme"]),
    ("tensorboardX", '`SummaryWriter("s3://...")`'):
        ("unpatched", [f"{TB}::test_s3_urls_go_to_tensorboardx_own_writer"]),
    ("pandas", "`read_csv`, `read_table`, `read_fwf`, `read_json`, `read_parquet`, "
               "`read_feather`, `read_pickle`, `read_orc`, `read_excel`, `read_xml`, "
               "`read_stata`, `read_sas` on `s3://` (any pfio URL)"):
        ("works", [f"{PD}::test_csv_round_trip_with_compression_from_the_suffix",
                   f"{PD}::test_json_round_trip_with_compression_from_the_suffix",
                   f"{PD}::test_read_csv_takes_its_path_by_keyword_and_reads_in_chunks",
                   f"{PD}::test_parquet_round_trip_with_columns",
                   f"{PD}::test_other_readers", f"{PD}::test_mem_urls_too"]),
    ("pandas", "`to_csv`, `to_json`, `to_pickle`, `to_parquet`, `to_feather` on `s3://`"):
        ("works", [f"{PD}::test_feather_and_pickle_round_trip",
                   f"{PD}::test_to_csv_appends_to_an_object"]),
    ("pandas", "`to_parquet(url, partition_cols=[...])`"):
        ("works", [f"{PD}::test_parquet_partitioned_directory_round_trip"]),
    ("pandas", "readers on members of archives on S3 (`s3://b/data.zip/x.csv`, "
               "`s3://b/t.tar/x.parquet`)"):
        ("works", [f"{PD}::test_members_of_a_zip_on_s3", f"{PD}::test_members_of_a_tar_on_s3"]),
    ("pandas", "any call with `storage_options=`"):
        ("unpatched", [f"{PD}::test_storage_options_mean_fsspec_and_go_to_pandas_untouched"]),
    ("torch", "`torch.save(obj, url)`, `torch.load(url)`"):
        ("works", [f"{T}::test_save_and_load_a_state_dict", f"{T}::test_save_and_load_by_keyword",
                   f"{T}::test_members_of_a_zip_on_s3_load_mapped_and_streamed"]),
    ("torch", "`torch.load(url, mmap=True)`"):
        ("works", [f"{T}::test_load_with_mmap_maps_a_local_copy",
                   f"{T}::test_a_mapped_load_survives_a_new_version_of_the_object"]),
    ("torch", "`torch.jit.save(module, url)`, `torch.jit.load(url)`"):
        ("works", [f"{T}::test_jit_save_and_load", f"{T}::test_jit_save_error_publishes_nothing"]),
    ("datasets", '`load_dataset("csv" / "json" / "parquet", data_files="pfio://s3/...")`'):
        ("works", [f"{HF}::test_load_dataset_of_a_data_file",
                   f"{HF}::test_load_dataset_with_splits_and_a_glob",
                   f"{HF}::test_load_dataset_streaming",
                   f"{HF}::test_load_dataset_of_a_member_of_a_zip_on_s3"]),
    ("datasets", '`Dataset.save_to_disk("pfio://s3/...")`, `DatasetDict.save_to_disk`, '
                 '`load_from_disk`'):
        ("works", [f"{HF}::test_save_to_disk_and_load_from_disk",
                   f"{HF}::test_dataset_dict_save_and_load",
                   f"{HF}::test_load_from_disk_of_a_missing_path_raises"]),
    ("datasets", '`load_dataset("imagefolder", data_files={"train": '
                 '"pfio://s3/b/img/train/**"})`'):
        ("works", [f"{HF}::test_imagefolder_of_data_files"]),
    ("datasets", '`load_dataset("imagefolder", data_dir="pfio://s3/...")`'):
        ("upstream bug", [f"{HF}::test_imagefolder_data_dir_is_taken_for_a_local_path"]),
    ("datasets", "`Dataset.to_csv`, `to_json`, `to_parquet` to `pfio://s3/...`"):
        ("works", [f"{HF}::test_dataset_writers"]),
    ("datasets", "any call with `HF_DATASETS_OFFLINE=1` or `HF_HUB_OFFLINE=1`"):
        ("not supported", []),
    ("datasets", '`data_files="s3://..."`'): ("not supported", []),
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
                   f"{OS_}::test_path_like_urls_in_library_calls",
                   f"{T}::test_path_objects_in_the_second_position_and_by_keyword",
                   f"{N}::test_path_objects_by_keyword", f"{PD}::test_path_objects_by_keyword"]),
    ("pathlib", '`pathlib.Path("s3://b/k")`'):
        ("refused", [f"{OS_}::test_pathlib_collapses_the_scheme_so_use_str_urls_or_pfio_path"]),
    ("subprocess", '`subprocess.run([sys.executable, "tool.py"])` from a patched script'):
        ("unpatched", ["tests/patches/test_startup_hook.py::"
                       "test_a_patched_script_patches_its_workers_not_its_subprocesses"]),
    ("torchvision, timm", "folder and tar datasets"): ("not tested", []),
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


def test_every_status_is_explained_and_every_tested_row_names_tests():
    assert {status for status, _ in ROWS.values()} <= STATUSES
    assert [key for key, (status, tests) in ROWS.items()
            if (status in UNTESTED) != (not tests)] == []


def test_every_row_names_tests_that_exist():
    missing = [test for _, tests in ROWS.values() for test in tests
               if test.split("::")[1] not in _functions(test.split("::")[0])]
    assert missing == []
