"""A training-style script that keeps its outputs on S3, written for local disk and run
unchanged under ``pfio.patch_all()`` in a fresh process: it makes its run directory, saves
sample images with PIL, rewrites a metrics CSV with pandas and renames it into place, copies
the best sample with ``shutil``, removes one, archives the samples with ``copytree`` and
``rmtree``, and moves the archive to local disk."""

import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
from PIL import Image

import pfio

from .conftest import worker_env

SCRIPT = """
import json
import os
import shutil
import sys

import pfio

pfio.patch_all()  # first thing, before the libraries are imported

import numpy as np
import pandas as pd
from PIL import Image

run, keep = sys.argv[1], sys.argv[2]
os.makedirs(os.path.join(run, "samples"), exist_ok=True)
rows = []
for epoch in range(3):
    sample = Image.fromarray(np.full((8, 8, 3), epoch * 60, np.uint8))
    sample.save(os.path.join(run, "samples", f"epoch{epoch}.png"))
    rows.append({"epoch": epoch, "loss": 1.0 / (epoch + 1)})
    pd.DataFrame(rows).to_csv(os.path.join(run, "metrics.csv.tmp"), index=False)
    os.replace(os.path.join(run, "metrics.csv.tmp"), os.path.join(run, "metrics.csv"))
best = max(rows, key=lambda row: -row["loss"])["epoch"]
shutil.copy(os.path.join(run, "samples", f"epoch{best}.png"), os.path.join(run, "best.png"))
os.remove(os.path.join(run, "samples", "epoch0.png"))
shutil.copytree(os.path.join(run, "samples"), os.path.join(run, "archive", "samples"))
shutil.rmtree(os.path.join(run, "samples"))
shutil.move(os.path.join(run, "archive"), keep)
print(json.dumps({"run": sorted(os.listdir(run)),
                  "exists": os.path.exists(os.path.join(run, "samples"))}))
"""


def test_training_script_keeps_its_outputs_on_s3(s3_server, s3_env, s3_bucket, tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    run = f"s3://{s3_bucket}/runs/exp1"
    result = subprocess.run(
        [sys.executable, str(tmp_path / "train.py"), run, str(tmp_path / "kept")],
        env=worker_env(s3_server, tmp_path / "cache", []), capture_output=True, text=True,
        timeout=120)
    assert result.returncode == 0, result.stderr[-4000:]
    assert json.loads(result.stdout) == {"run": ["best.png", "metrics.csv"], "exists": False}

    with pfio.from_url(run) as fs:
        assert sorted(fs.list(recursive=True)) == ["best.png", "metrics.csv"]
        with fs.open("metrics.csv", "rb") as f:
            metrics = pd.read_csv(io.BytesIO(f.read()))
        with fs.open("best.png", "rb") as f, Image.open(f) as best:
            assert np.asarray(best).max() == 120
    assert list(metrics["epoch"]) == [0, 1, 2]
    assert sorted(p.name for p in (tmp_path / "kept" / "samples").iterdir()) == [
        "epoch1.png", "epoch2.png"]
