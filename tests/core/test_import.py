import subprocess
import sys


def test_import_pfio_loads_no_optional_dependency():
    script = (
        "import sys, pfio, pfio.v2\n"
        "heavy = ['boto3', 'botocore', 'torch', 'cv2', 'pandas', 'numpy', 'pyarrow', 'wrapt',"
        " 'hdfs_native', 'chainer', 'zstandard', 'tqdm']\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
