"""LocalStack is installed by the project like the SAM CLI: `make test` needs `make localstack`, which builds its own
Python 3.13 venv from a locked requirement set (every package pinned, with hashes); without Python 3.13, make
says how to get one."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "infra" / "localstack" / "requirements.txt"


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    make = shutil.which("make")
    assert make is not None
    return subprocess.run([make, "--no-print-directory", "-C", str(ROOT), *args], capture_output=True, text=True)


def test_make_test_installs_localstack_first() -> None:
    database = _make("-pn", "test").stdout.splitlines()
    assert any(line.startswith("test:") and " localstack" in line.split("pytest")[0] for line in database)


def test_the_lock_pins_every_package_with_hashes() -> None:
    text = LOCK.read_text()
    requirements = re.findall(r"^([A-Za-z0-9_.\[\]-]+)(==[^ \\\n]+)? \\$", text, re.M)
    assert len(requirements) > 50
    assert all(version for _, version in requirements), [name for name, version in requirements if not version]
    assert text.count("--hash=sha256:") >= len(requirements)
    pinned = dict(requirements)
    assert pinned["localstack-core"] == "==2026.3.0" and pinned["cbor2"].startswith("==5.")
    assert "service-identity" in pinned
    # LocalStack's certificate needs X509.add_extensions, which pyOpenSSL 25 removed.
    assert pinned["pyopenssl"].startswith("==24.") and pinned["cryptography"].startswith("==44.")


def test_without_python_3_13_make_says_how_to_get_one() -> None:
    done = _make("localstack", "PYTHON313=", "LOCALSTACK_STAMP=/nonexistent/.installed-test")
    assert done.returncode != 0
    assert "LocalStack needs Python 3.13" in done.stderr and "pyenv install 3.13" in done.stderr
