"""The local backend: the session's kernel under bubblewrap (`bwrap`), in its own user, PID, network, IPC, UTS and
mount namespaces, with the seccomp filter of `sandbox/seccomp.py`, every capability dropped, an empty environment,
and a filesystem of read-only system directories, the Python installation and its scientific site-packages, plus
two size-limited tmpfs (`/work`, the scratch directory, and `/tmp`). The platform's files, the project, `.local/`,
home directories and credentials are simply not in it. No isolation, no sandbox: `availability()` says why and
the tool is not offered; code never runs unconfined.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

from personal_agent.sandbox import seccomp
from personal_agent.sandbox.config import SandboxLimits
from personal_agent.sandbox.interface import Availability
from personal_agent.sandbox.kernel_process import KernelProcess

KERNEL = Path(__file__).with_name("kernel.py")
SITE_PACKAGES = "/opt/pa/site-packages"
KERNEL_PATH = "/opt/pa/kernel.py"
UNPRIVILEGED = "65534"  # nobody


def _system_dirs() -> list[str]:
    """The system directories, as they are on this machine (Debian's /bin, /lib are symlinks into /usr)."""
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    return args


def _visible(path: str) -> list[str]:
    """Directories above a bound path, made traversable (0755) for the sandbox's user whatever the platform's umask
    (`pa dev` runs with 077) and whatever they are outside (/root is 0700)."""
    args: list[str] = []
    parts = Path(path).parts[1:-1]
    for depth in range(1, len(parts) + 1):
        args += ["--perms", "0755", "--dir", "/" + "/".join(parts[:depth])]
    return args


def _identity(as_root: bool) -> list[str]:
    """As root: no user namespace; the kernel keeps only CAP_SETUID/CAP_SETGID to become a one-off unprivileged
    uid before it reads any code (so RLIMIT_NPROC holds: root is exempt from it). Otherwise: a user namespace."""
    if as_root:
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"] + [
            "--cap-drop",
            "ALL",
            "--cap-add",
            "CAP_SETUID",
            "--cap-add",
            "CAP_SETGID",
        ]
    return ["--unshare-all", "--unshare-user", "--cap-drop", "ALL"]


def command(limits: SandboxLimits, seccomp_fd: int | None, as_root: bool) -> list[str]:
    """The bwrap command line of a kernel."""
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    python_home = sys.base_prefix
    site_packages = scientific_site_packages()
    args = [bwrap, *_identity(as_root), "--die-with-parent", "--new-session", "--clearenv", "--hostname", "sandbox"]
    args += _system_dirs()
    if not python_home.startswith("/usr/"):
        args += [*_visible(python_home), "--ro-bind", python_home, python_home]
    args += [*_visible(SITE_PACKAGES), "--ro-bind", site_packages, SITE_PACKAGES, "--ro-bind", str(KERNEL), KERNEL_PATH]
    if Path("/etc/fonts").is_dir():  # fontconfig's configuration (no secrets in it)
        args += [*_visible("/etc/fonts"), "--ro-bind", "/etc/fonts", "/etc/fonts"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    size = str(limits.scratch_bytes)
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/tmp"]
    args += ["--perms", "1777", "--size", size, "--tmpfs", "/work", "--chdir", "/work"]
    for name, value in (
        ("HOME", "/work"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
        ("LANG", "C.UTF-8"),
        ("MPLBACKEND", "Agg"),
        ("MPLCONFIGDIR", "/tmp/matplotlib"),
        ("XDG_CACHE_HOME", "/tmp/cache"),
        ("OPENBLAS_NUM_THREADS", "1"),
        ("OMP_NUM_THREADS", "1"),
        ("PYTHONDONTWRITEBYTECODE", "1"),
    ):
        args += ["--setenv", name, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    python = str(Path(sys.base_exec_prefix) / "bin" / Path(sys.executable).name)
    if not Path(python).exists():
        python = str(Path(sys.executable).resolve())
    return [*args, "--", python, "-I", "-S", KERNEL_PATH]


def scientific_site_packages() -> str:
    """The site-packages directory that holds pandas (the project's virtualenv), else this interpreter's own."""
    found = importlib.util.find_spec("pandas")
    if found is not None and found.origin:
        return str(Path(found.origin).parents[1])
    return sysconfig.get_paths()["purelib"]


def one_off_uid() -> int:
    """A uid no account has, for one session (its processes count against RLIMIT_NPROC alone)."""
    return secrets.randbelow(1_000_000_000) + 1_000_000


def _seccomp_file() -> int | None:
    """A descriptor of the filter program (read by bwrap at start), or None where there is none for the machine."""
    if not seccomp.supported():
        return None
    fd, path = tempfile.mkstemp(prefix="pa-seccomp-")
    os.unlink(path)
    os.write(fd, seccomp.socket_filter())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.cache
def probe() -> Availability:
    """Whether a kernel can start here (bwrap present, namespaces allowed), checked once per process."""
    if sys.platform != "linux":
        return Availability(False, "the local sandbox needs Linux namespaces (bubblewrap)")
    if shutil.which("bwrap") is None:
        return Availability(False, "bubblewrap (bwrap) is not installed: `make sandbox` or apt-get install bubblewrap")
    fd = _seccomp_file()
    try:
        argv = command(SandboxLimits(), fd, os.geteuid() == 0)
        argv = [*argv[: argv.index("--") + 1], argv[argv.index("--") + 1], "-I", "-S", "-c", "pass"]
        done = subprocess.run(argv, env={}, pass_fds=(fd,) if fd is not None else (), capture_output=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return Availability(False, f"bubblewrap could not start: {type(exc).__name__}: {exc}"[:300])
    finally:
        if fd is not None:
            os.close(fd)
    if done.returncode != 0:
        reason = done.stderr.decode("utf-8", "replace").strip()[:300]
        return Availability(False, f"bubblewrap cannot create namespaces here: {reason}")
    who = "a one-off unprivileged uid" if os.geteuid() == 0 else "a user namespace"
    features = ("namespaces: pid net ipc uts mount", who, "rlimits", "seccomp" if fd is not None else "no seccomp")
    return Availability(True, "bubblewrap: " + ", ".join(features), backend="local", features=features)


class BubblewrapBackend:
    """Sessions of isolated kernels on this machine."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits

    def availability(self) -> Availability:
        return probe()

    async def open(self, org_id: str, prefix: str = "") -> KernelProcess:
        """A new kernel (`prefix` is not used: the files' bytes go to it through its pipe)."""
        fd = _seccomp_file()
        try:
            as_root = os.geteuid() == 0
            argv = command(self.limits, fd, as_root)
            kernel_args = {**self.limits.kernel_args(SITE_PACKAGES), "uid": one_off_uid() if as_root else None}
            return await KernelProcess.start(argv, kernel_args, self.limits, pass_fds=(fd,) if fd is not None else ())
        finally:
            if fd is not None:
                os.close(fd)
