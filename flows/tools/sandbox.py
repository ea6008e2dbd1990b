"""Deny this process every file write outside given folders (Linux Landlock), for `duplirank sql`.

Landlock (Linux ≥ 5.13) lets a process drop rights for itself; nothing, root included, gives
them back. `deny_writes` handles every right that creates, writes, truncates, links, renames or
removes a file or folder, and grants them again beneath the given folders only. Reads stay
allowed (DuckDB's `allowed_paths` confine what a query reads); so do files already open, such as
stdout redirected by the shell.

Landlock restricts the calling thread and the threads it starts afterwards, not threads already
running: call it before DuckDB starts its threads (before the first connection). The threads a
`duplirank` process holds before (jemalloc's and Polars' housekeeping, started at import) run no
query. Where Landlock is missing (another OS, an old or unconfigured kernel) nothing changes and
`deny_writes` returns False; the read-only connection still holds (`flows/tools/query/`).
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from collections.abc import Iterable
from pathlib import Path

# syscall numbers: one table for every Linux architecture (asm-generic/unistd.h)
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
RULESET_VERSION = 1  # flag of create_ruleset: return the ABI version
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_* (linux/landlock.h) that change the file system, by the ABI that added them
WRITE_RIGHTS = {
    1: (
        (1 << 1)  # WRITE_FILE
        | (1 << 4)  # REMOVE_DIR
        | (1 << 5)  # REMOVE_FILE
        | (1 << 6)  # MAKE_CHAR
        | (1 << 7)  # MAKE_DIR
        | (1 << 8)  # MAKE_REG
        | (1 << 9)  # MAKE_SOCK
        | (1 << 10)  # MAKE_FIFO
        | (1 << 11)  # MAKE_BLOCK
        | (1 << 12)  # MAKE_SYM
    ),
    2: 1 << 13,  # REFER: link or rename a file into another folder
    3: 1 << 14,  # TRUNCATE
}


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none."""
    if not sys.platform.startswith("linux"):
        return 0
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    version = libc.syscall(
        CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(RULESET_VERSION)
    )
    return max(int(version), 0)


def deny_writes(writable: Iterable[Path]) -> bool:
    """Forbid this thread (and the threads it starts) to change any file but beneath `writable`.

    True once the kernel enforces it; False where Landlock is unavailable (nothing changed).
    Irreversible for the process: only for a process that exits after its work (`duplirank sql`).
    """
    abi = landlock_abi()
    if abi < 1:
        return False
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    rights = 0
    for version, bits in WRITE_RIGHTS.items():
        if abi >= version:
            rights |= bits
    attr = ctypes.create_string_buffer(struct.pack("=Q", rights))  # handled_access_fs
    ruleset = libc.syscall(CREATE_RULESET, attr, ctypes.c_size_t(8), ctypes.c_uint32(0))
    if ruleset < 0:
        return False
    try:
        for folder in writable:
            fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
            try:
                # landlock_path_beneath_attr (packed): u64 allowed_access, s32 parent_fd
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd))
                if libc.syscall(
                    ADD_RULE,
                    ctypes.c_int(ruleset),
                    ctypes.c_int(RULE_PATH_BENEATH),
                    rule,
                    ctypes.c_uint32(0),
                ):
                    return False
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0):
            return False
        return libc.syscall(RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) == 0
    finally:
        os.close(ruleset)
