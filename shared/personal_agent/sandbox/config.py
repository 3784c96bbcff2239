"""What the sandbox is told by its environment: which backend, and the limits of a session and of a call."""

from __future__ import annotations

import os
from typing import Literal

from pydantic import BaseModel, Field

Backend = Literal["local", "lambda", "off"]


class SandboxLimits(BaseModel):
    """The limits every session runs under (the kernel lowers its own rlimits to these before running code)."""

    wall_seconds: float = Field(30.0, gt=0, le=900)
    """A call's wall-clock time; past it the session is killed (its variables are lost)."""
    cpu_seconds: int = Field(120, ge=1, le=3600)
    """CPU seconds of the session's kernel, all its calls together (RLIMIT_CPU)."""
    memory_bytes: int = Field(1536 * 2**20, ge=256 * 2**20)
    """Address space of each process (RLIMIT_AS): an allocation past it is a MemoryError."""
    file_bytes: int = Field(64 * 2**20, ge=2**20)
    """The largest file a process may write (RLIMIT_FSIZE)."""
    scratch_bytes: int = Field(256 * 2**20, ge=2**20)
    """The size of the session's scratch directory (a tmpfs) and of /tmp."""
    processes: int = Field(32, ge=4, le=4096)
    """Processes and threads of the sandbox's user (RLIMIT_NPROC)."""
    output_chars: int = Field(20_000, ge=100)
    """Characters of stdout, of stderr and of the last expression's repr kept per call; the rest is cut off."""
    max_files: int = Field(10, ge=0)
    """Files one call may return (new or changed files of the scratch directory)."""
    files_bytes: int = Field(8 * 2**20, ge=0)
    """Bytes of files one call may return, all together."""
    idle_seconds: float = Field(300.0, gt=0)
    """A session nobody used for this long is closed (its run ended without saying so, or was abandoned)."""

    def kernel_args(self, site_packages: str) -> dict[str, int | str]:
        """What the kernel reads from its argv."""
        return {
            "memory_bytes": self.memory_bytes,
            "file_bytes": self.file_bytes,
            "processes": self.processes,
            "cpu_seconds": self.cpu_seconds,
            "output_chars": self.output_chars,
            "max_files": self.max_files,
            "files_bytes": self.files_bytes,
            "site_packages": site_packages,
        }


class SandboxConfig(BaseModel):
    backend: Backend = "off"
    function_name: str = ""
    """The sandbox function (AWS backend): its name or ARN."""
    tier: int = Field(2, ge=0, le=2)
    """The trust tier of where the code runs: a chat whose content needs more does not send files there."""
    default_enabled: bool = False
    """Whether an org that has not chosen gets the tool (`pa dev`: yes, where the backend is available)."""
    limits: SandboxLimits = SandboxLimits()

    @classmethod
    def from_environment(cls) -> SandboxConfig:
        env = os.environ
        local = env.get("PA_ENV", "local") in ("local", "test")
        default: Backend = "local" if local else ("lambda" if env.get("PA_SANDBOX_FUNCTION") else "off")
        backend = env.get("PA_SANDBOX_BACKEND") or default
        limits = {
            name: env[f"PA_SANDBOX_{name.upper()}"]
            for name in SandboxLimits.model_fields
            if env.get(f"PA_SANDBOX_{name.upper()}")
        }
        return cls(
            backend=backend,
            function_name=env.get("PA_SANDBOX_FUNCTION", ""),
            tier=int(env.get("PA_SANDBOX_TIER") or 2),
            default_enabled=(env.get("PA_SANDBOX_DEFAULT_ENABLED") or ("1" if local else "0")) == "1",
            limits=SandboxLimits.model_validate(limits),
        )
