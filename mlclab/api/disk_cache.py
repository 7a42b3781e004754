"""Compiled code kept on disk, so a restarted kernel, or another student's, compiles nothing a
kernel compiled before (PyTorch inductor's and Triton's caches, ccache, JAX's persistent
compilation cache are the models).

An entry is a directory named by its key (``api.cache.key``: the program text, the resolved
target with this CPU's features, the compile options, and the versions of mlclab's code and
TVM) holding ``lib.so`` -- the executable as TVM's ``export_library`` writes it -- and
``meta.json`` (the key, the versions, the library's SHA-256 and size). Nothing else is stored:
the IR is not serializable in TVM 0.27 (TVM-NOTES section 8), so the typed program and the
Relax module are made again from the text (milliseconds) and the build record the views read
is recorded again on first use (``Built.record``). Only builds with no fallback are stored.

- **Atomic**: an entry is written in a temporary directory beside it, then renamed into place;
  when several processes compile one program at once, the first rename wins and the others'
  copies are dropped. Readers never see a half-written entry.
- **A bad entry is a miss**: a ``meta.json`` that does not parse or names another key or
  version, a library whose size or hash differs (truncated, corrupted) -- the library is checked
  before it is loaded, never after -- or one TVM cannot load. The bad entry is removed (when the
  folder is writable) and the program compiled again.
- **Bounded**: past ``max_bytes`` the least recently used entries go (a hit touches the entry's
  ``meta.json``), ccache's rule.
- **Two levels**: a read-only shared folder an instructor fills for a class (``python -m
  mlclab.course warm-cache``), read first, never written or touched; then the user's own.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
import warnings
from pathlib import Path

LIBRARY = "lib.so"
META = "meta.json"
FORMAT = 1                    # bumped when an entry's layout changes
DEFAULT_MAX_BYTES = 512 * 2**20
STALE_S = 3600                # a temporary directory this old was left by a killed writer


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_whole(path: Path, text: str) -> None:
    """``text`` in ``path``, written whole or not at all: a temporary file beside it, renamed
    into place, so a reader in another process never sees half of it."""
    fd, temp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


class DiskCache:
    """One folder of entries. ``read_only`` for the shared class cache."""

    def __init__(self, path, read_only: bool = False, max_bytes: int = DEFAULT_MAX_BYTES):
        self.path = Path(path).expanduser()
        self.read_only = read_only
        self.max_bytes = max_bytes
        self.hits = self.misses = self.writes = self.bad = 0
        self.last_error: str | None = None
        self._lock = threading.Lock()

    def _entry(self, key: str) -> Path:
        return self.path / key[:2] / key

    # ------------------------------------------------------------------ reading
    def load(self, key: str, versions: dict):
        """The executable stored under ``key``, or None (a miss) -- never an exception."""
        entry = self._entry(key)
        meta_path, lib_path = entry / META, entry / LIBRARY
        if not meta_path.exists():
            self._count("misses")
            return None
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            good = (isinstance(meta, dict) and meta.get("format") == FORMAT
                    and meta.get("key") == key and meta.get("versions") == versions
                    and lib_path.stat().st_size == meta.get("size")
                    and _sha256(lib_path) == meta.get("sha256"))
            executable = _load_library(lib_path) if good else None
        except Exception as exc:       # unreadable, half-deleted, TVM refused the library
            self.last_error = f"{entry}: {type(exc).__name__}: {exc}"
            executable = None
        if executable is None:
            self._count("bad")
            self._count("misses")
            self._remove(entry)
            return None
        self._count("hits")
        if not self.read_only:
            try:
                os.utime(meta_path)           # least recently *used*, not written
            except OSError:
                pass
        return executable

    # ------------------------------------------------------------------ writing
    def save(self, key: str, versions: dict, executable) -> bool:
        """Store ``executable`` under ``key``; False (and the reason in ``last_error``) when it
        could not be, which costs only a later compile."""
        if self.read_only:
            return False
        entry = self._entry(key)
        if (entry / META).exists():
            return True
        temp = None
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            temp = Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=entry.parent))
            executable.export_library(str(temp / LIBRARY))
            lib = temp / LIBRARY
            meta = {"format": FORMAT, "key": key, "versions": versions,
                    "size": lib.stat().st_size, "sha256": _sha256(lib), "written": time.time()}
            (temp / META).write_text(json.dumps(meta, indent=1), encoding="utf-8")
            try:
                os.rename(temp, entry)        # atomic; fails if another process got there first
            except OSError:
                if not (entry / META).exists():
                    raise
            else:
                temp = None
                self._count("writes")
        except Exception as exc:   # no C compiler to link, a full disk, no permission
            self.last_error = f"could not save a compiled program in {self.path}: {exc}"
            _warn_once(self.path, self.last_error)
            return False
        finally:
            if temp is not None:
                shutil.rmtree(temp, ignore_errors=True)
        self.evict()
        return True

    def evict(self) -> None:
        """Remove the least recently used entries until the folder is under ``max_bytes``, and
        what a writer killed mid-write left (a temporary directory an hour old)."""
        if self.read_only:
            return
        for temp in self.path.glob("??/.*"):
            try:
                if time.time() - temp.stat().st_mtime > STALE_S:
                    shutil.rmtree(temp, ignore_errors=True)
            except OSError:
                pass
        entries = self.entries()
        total = sum(size for _, _, size in entries)
        for _, entry, size in sorted(entries):
            if total <= self.max_bytes:
                break
            self._remove(entry)
            total -= size

    def entries(self) -> list:
        """``(last used, directory, bytes)`` of each entry."""
        found = []
        if not self.path.is_dir():
            return found
        for meta in self.path.glob(f"??/*/{META}"):
            try:
                used = meta.stat().st_mtime
                size = sum(f.stat().st_size for f in meta.parent.iterdir())
            except OSError:
                continue          # removed meanwhile
            found.append((used, meta.parent, size))
        return found

    def _remove(self, entry: Path) -> None:
        """Out of sight first (a rename), then deleted: a reader sees a whole entry or none."""
        if self.read_only:
            return
        try:
            gone = entry.with_name(f".gone-{entry.name}-{os.getpid()}-{threading.get_ident()}")
            os.rename(entry, gone)
            shutil.rmtree(gone, ignore_errors=True)
        except OSError:
            pass

    def clear(self) -> None:
        for _, entry, _ in self.entries():
            self._remove(entry)

    def _count(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def info(self) -> dict:
        entries = self.entries()
        return {"path": str(self.path), "read_only": self.read_only, "entries": len(entries),
                "bytes": sum(size for _, _, size in entries), "max_bytes": self.max_bytes,
                "hits": self.hits, "misses": self.misses, "writes": self.writes,
                "bad_entries": self.bad, "last_error": self.last_error}


def _load_library(path: Path):
    from tvm.relax.vm_build import VMExecutable
    from tvm.runtime import load_module

    executable = VMExecutable(load_module(str(path)))
    _drop_read_pages(path)
    return executable


MADV_DONTNEED = 4


def _drop_read_pages(path: Path) -> None:
    """Let go of the pages of ``path``'s ``.rodata`` that loading it read: the serialized
    executable -- bytecode and constants, a model's weights -- which TVM has just copied into
    the executable. The library stays loaded (its kernels run from ``.text``), but without
    this its weights would count twice in the kernel's size for as long as it lives (ResNet-18:
    45 MB). Safe however TVM uses that memory: ``.rodata`` is a clean, private, file-backed
    mapping, so a page dropped is read from the file again if it is ever touched. Linux only;
    elsewhere, or if anything does not look as expected, nothing is done."""
    import ctypes
    import struct

    try:
        with open(path, "rb") as f:
            header = f.read(64)
            if header[:4] != b"\x7fELF" or header[4] != 2:       # ELF64 only
                return
            shoff, = struct.unpack_from("<Q", header, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 0x3A)
            f.seek(shoff)
            table = f.read(shentsize * shnum)
            sections = [struct.unpack_from("<IIQQQQ", table, i * shentsize)
                        for i in range(shnum)]
            _, _, _, _, names_at, names_size = sections[shstrndx]
            f.seek(names_at)
            names = f.read(names_size)
        rodata = [(addr, size) for name, _, _, addr, _, size in sections
                  if names[name:names.index(b"\0", name)] == b".rodata"]
        base = _load_base(path)
        if not rodata or base is None:
            return
        addr, size = rodata[0]
        page = os.sysconf("SC_PAGE_SIZE")
        start = -(-(base + addr) // page) * page           # whole pages inside the section
        end = (base + addr + size) // page * page
        if end > start:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), MADV_DONTNEED)
    except (OSError, ValueError, struct.error, AttributeError):
        return


def _load_base(path: Path):
    """The address ``path`` is loaded at (its mapping of file offset 0), from
    ``/proc/self/maps``; None if it is not mapped."""
    wanted = os.path.realpath(path)
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].strip() == wanted and int(fields[2], 16) == 0:
                return int(fields[0].split("-")[0], 16)
    return None


_WARNED: set = set()


def _warn_once(folder: Path, message: str) -> None:
    """Said in the cell once per folder: the first reason is the one to fix."""
    if folder not in _WARNED:
        _WARNED.add(folder)
        warnings.warn(f"mlclab's compile cache: {message} (compiling works; the next kernel "
                      f"compiles this program again)", stacklevel=4)
