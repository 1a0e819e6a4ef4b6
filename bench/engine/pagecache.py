#!/usr/bin/env python3
"""The page-size state of a benchmark file in the page cache, reported or set.

Decode streams every weight once per token, and on a VM a TLB miss costs a nested page walk: whether the file's
pages sit in the page cache as 2 MiB folios (mappable with one PMD entry) or as small ones moves decode ~1.2x, for
our engine and llama.cpp alike (bench/results/engine-notes.md, "Q8_0 decode against the bandwidth"). Which state a
file is in depends on who read it first and how, so figures from different sessions are not comparable unless the
benchmark sets it.

    pagecache.py report FILE...   share of each file's cached bytes that maps as 2 MiB pages
    pagecache.py huge FILE...     evict the file from the page cache, read it back through a mapping advised
                                  MADV_HUGEPAGE (read-ahead then allocates 2 MiB folios), and report

Eviction is posix_fadvise(DONTNEED): pages another process has mapped stay where they are, and the report says so.
Linux only (madvise advice numbers and /proc/self/smaps); elsewhere it says it cannot and exits 0, so benchmarks
keep running.
"""
import ctypes
import ctypes.util
import os
import sys

PMD = 2 << 20
PROT_READ, PROT_NONE = 1, 0
MAP_PRIVATE, MAP_SHARED, MAP_ANONYMOUS, MAP_FIXED = 0x02, 0x01, 0x20, 0x10
MADV_HUGEPAGE, MADV_POPULATE_READ = 14, 22

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
MAP_FAILED = ctypes.c_void_p(-1).value


def fail(what):
    err = ctypes.get_errno()
    raise OSError(err, f"{what}: {os.strerror(err)}")


def map_aligned(fd, size):
    """Maps the file read-only at a 2 MiB-aligned address, so 2 MiB folios can map as PMD entries."""
    span = size + PMD
    base = libc.mmap(None, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    if base in (None, MAP_FAILED):
        fail("reserving address space")
    aligned = (base + PMD - 1) // PMD * PMD
    p = libc.mmap(aligned, size, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0)
    if p in (None, MAP_FAILED):
        libc.munmap(base, span)
        fail("mapping the file")
    return base, span, p


def smaps_entry(address):
    """The /proc/self/smaps fields (kB) of the mapping that starts at `address`."""
    fields, inside = {}, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                if inside:
                    break
                inside = int(head.split("-")[0], 16) == address
            elif inside and line.split()[-1] == "kB":
                fields[head.rstrip(":")] = int(line.split()[1])
    return fields


def state(path, populate_huge):
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        if populate_huge:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        base, span, p = map_aligned(fd, size)
        try:
            if populate_huge and libc.madvise(p, size, MADV_HUGEPAGE) != 0:
                fail("madvise(MADV_HUGEPAGE)")
            if libc.madvise(p, size, MADV_POPULATE_READ) != 0:
                fail("madvise(MADV_POPULATE_READ)")
            s = smaps_entry(p)
        finally:
            libc.munmap(base, span)
    finally:
        os.close(fd)
    rss, pmd = s.get("Rss", 0), s.get("FilePmdMapped", 0)
    share = pmd / rss if rss else 0.0
    return f"{os.path.basename(path)}: {size / 1e6:.1f} MB, {share:.0%} in 2 MiB pages"


def main(argv):
    if len(argv) < 3 or argv[1] not in ("report", "huge"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: pagecache.py report|huge FILE...", file=sys.stderr)
        return 2
    if not sys.platform.startswith("linux"):
        print("page cache state: not available on this platform", file=sys.stderr)
        return 0
    lines = []
    for path in argv[2:]:
        try:
            lines.append(state(path, argv[1] == "huge"))
        except OSError as e:
            print(f"pagecache.py: {path}: {e}", file=sys.stderr)
            return 1
    print("page cache: " + "; ".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
