"""The local sandbox's seccomp filter, as the classic BPF program bubblewrap loads (`--seccomp FD`).

One rule on top of the empty network namespace: `socket()` of any family but AF_UNIX fails with EACCES, so code in
the sandbox cannot open a TCP, UDP, raw, netlink or packet socket at all (not even to the namespace's own
loopback). `io_uring_setup` fails with ENOSYS: an io_uring can open sockets itself (IORING_OP_SOCKET, Linux 5.19+),
around the `socket()` rule. A call from another architecture's ABI (x32, or i386 on x86-64) is killed, so the rules
cannot be stepped around by a different syscall number.
"""

from __future__ import annotations

import platform
import struct

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_ERRNO_EACCES = 0x00050000 | 13
_ERRNO_ENOSYS = 0x00050000 | 38
_IO_URING_SETUP = 425  # the same number on x86-64 and aarch64 (the syscall table they share since 5.1)
_AF_UNIX = 1
_X32_BIT = 0x40000000

# (audit arch, socket syscall number) per machine.
_ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198)}


def _op(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def supported() -> bool:
    """Whether a filter exists for this machine's architecture."""
    return platform.machine() in _ARCHES


def socket_filter() -> bytes:
    """The BPF program: only AF_UNIX sockets, no io_uring; everything else allowed; a foreign ABI killed."""
    arch, socket_nr = _ARCHES[platform.machine()]
    return b"".join(
        [
            _op(_LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
            _op(_JEQ_K, 1, 0, arch),
            _op(_RET_K, 0, 0, _KILL_PROCESS),
            _op(_LD_W_ABS, 0, 0, 0),  # seccomp_data.nr
            _op(_JGE_K, 0, 1, _X32_BIT),
            _op(_RET_K, 0, 0, _KILL_PROCESS),
            _op(_JEQ_K, 0, 1, _IO_URING_SETUP),
            _op(_RET_K, 0, 0, _ERRNO_ENOSYS),
            _op(_JEQ_K, 0, 3, socket_nr),
            _op(_LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], the address family (low word)
            _op(_JEQ_K, 1, 0, _AF_UNIX),
            _op(_RET_K, 0, 0, _ERRNO_EACCES),
            _op(_RET_K, 0, 0, _ALLOW),
        ]
    )
