"""Lightning on ``pfio://s3/...`` through the fsspec bridge, with Lightning's own calls
unchanged: ``Trainer(default_root_dir=...)`` with its default logger (TensorBoard, through
tensorboardX), ``CSVLogger`` (which appends), ``ModelCheckpoint`` and loading a checkpoint
back. One tiny training run per logger, for the whole module, on the moto server."""

from __future__ import annotations

import csv
import io
import os

import pytest

L = pytest.importorskip("lightning")
pytest.importorskip("tensorboardX")

import fsspec  # noqa: E402
import torch  # noqa: E402
from lightning.pytorch.callbacks import ModelCheckpoint  # noqa: E402
from lightning.pytorch.demos.boring_classes import BoringModel  # noqa: E402
from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger  # noqa: E402
from tensorboardX.proto.event_pb2 import Event  # noqa: E402

import pfio  # noqa: E402
from pfio.integrations.fsspec import pfio_url  # noqa: E402
from pfio.integrations.tfrecord import iter_records  # noqa: E402

from ..conftest import new_bucket, use_s3_server  # noqa: E402


class LoggingModel(BoringModel):
    """Lightning's boring model, with a hyperparameter and a logged loss."""

    def __init__(self, lr: float = 0.1) -> None:
        super().__init__()
        self.save_hyperparameters()

    def training_step(self, batch, batch_idx):
        out = super().training_step(batch, batch_idx)
        self.log("train_loss", out["loss"])
        self.log("step", float(self.global_step))
        return out


STEPS = 3


def fit(root: str, **kwargs) -> L.Trainer:
    trainer = L.Trainer(default_root_dir=root, max_steps=STEPS, log_every_n_steps=1,
                        limit_val_batches=1, enable_progress_bar=False,
                        enable_model_summary=False, **kwargs)
    trainer.fit(LoggingModel())
    return trainer


@pytest.fixture(scope="module")
def s3(moto_server, tmp_path_factory):
    """A new bucket on the moto server as a ``pfio://`` root, the server's settings in the
    environment, and a fresh working directory (nothing may land in ``./pfio:``)."""
    with pytest.MonkeyPatch.context() as env:
        use_s3_server(env, moto_server)
        cwd = tmp_path_factory.mktemp("lightning-cwd")
        env.chdir(cwd)
        yield f"pfio://s3/{new_bucket(moto_server)}", cwd


@pytest.fixture(scope="module")
def default_run(s3):
    """``Trainer(default_root_dir=...)`` with the default logger, and its log directory."""
    root, _ = s3
    trainer = fit(f"{root}/default")
    assert isinstance(trainer.logger, TensorBoardLogger)
    return trainer, trainer.logger.log_dir


@pytest.fixture(scope="module")
def csv_run(s3):
    """A run with ``CSVLogger`` that saves (appends) its metrics at every step."""
    root, _ = s3
    logger = CSVLogger(f"{root}/csv", flush_logs_every_n_steps=1)
    checkpoints = ModelCheckpoint(save_top_k=1, monitor="step", mode="max",
                                  every_n_train_steps=1, save_last=True)
    trainer = fit(f"{root}/csv", logger=logger, callbacks=[checkpoints])
    return trainer, logger.log_dir


def bridge():
    return fsspec.filesystem("pfio")


def test_default_logger_writes_its_event_file_to_s3(default_run):
    _, log_dir = default_run
    events = bridge().glob(f"{log_dir}/events.out.tfevents.*")
    assert len(events) == 1
    records = list(iter_records(pfio_url(events[0])))
    tags = [v.tag for r in records for v in Event.FromString(r).summary.value]
    assert tags.count("train_loss") == STEPS


def test_default_logger_writes_hparams_beside_its_events(default_run):
    _, log_dir = default_run
    assert "lr: 0.1" in bridge().cat_file(f"{log_dir}/hparams.yaml").decode()


def test_nothing_lands_in_a_local_folder_named_after_the_url(default_run, csv_run, s3):
    _, cwd = s3
    assert os.listdir(cwd) == []


def test_checkpoint_is_on_s3_and_loads_back(default_run):
    trainer, _ = default_run
    path = trainer.checkpoint_callback.best_model_path
    assert path.startswith("pfio://s3/") and bridge().isfile(path)
    model = LoggingModel.load_from_checkpoint(path)
    assert model.hparams.lr == 0.1
    assert torch.equal(model.layer.weight, trainer.lightning_module.layer.weight)


def test_fit_resumes_from_a_checkpoint_on_s3(default_run, s3):
    trainer, _ = default_run
    root, _ = s3
    resumed = L.Trainer(default_root_dir=f"{root}/resumed", max_steps=STEPS + 1,
                        limit_val_batches=1, enable_progress_bar=False,
                        enable_model_summary=False, logger=False)
    resumed.fit(LoggingModel(), ckpt_path=trainer.checkpoint_callback.best_model_path)
    assert resumed.global_step == STEPS + 1


def test_csv_logger_appends_every_step_once(csv_run):
    _, log_dir = csv_run
    text = bridge().cat_file(f"{log_dir}/metrics.csv").decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["step"]) for r in rows] == list(range(STEPS))
    assert text.count("train_loss") == 1  # one header


def test_csv_logger_writes_hparams_first_thing(csv_run):
    _, log_dir = csv_run
    assert "lr: 0.1" in bridge().cat_file(f"{log_dir}/hparams.yaml").decode()


def test_top_k_checkpoints_replace_each_other_and_last_is_kept(csv_run):
    _, log_dir = csv_run
    names = [p.rsplit("/", 1)[1] for p in bridge().ls(f"{log_dir}/checkpoints", detail=False)]
    assert len(names) == 2 and "last.ckpt" in names  # the older top-1 ones were removed
    with bridge().open(f"{log_dir}/checkpoints/last.ckpt", "rb") as f:
        assert torch.load(f, weights_only=False)["global_step"] == STEPS


def test_next_csv_logger_takes_the_next_version(csv_run, s3):
    root, _ = s3
    assert CSVLogger(f"{root}/csv").version == 1


def test_a_run_under_patch_all_writes_the_same_files(s3):
    root, cwd = s3
    with pfio.patched():
        trainer = fit(f"{root}/patched")
    log_dir = trainer.logger.log_dir
    assert bridge().glob(f"{log_dir}/events.out.tfevents.*")
    assert bridge().isfile(trainer.checkpoint_callback.best_model_path)
    assert os.listdir(cwd) == []
