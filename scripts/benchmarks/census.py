"""The heap census of bench/heap-census.c, read back from the file it shares with the server, and the
breakdown of an idle stream's bytes it gives (`bench.py streams`)."""
import bisect, mmap, os, struct, subprocess, tempfile

from .common import BENCH


class HeapCensus:
    """bench/heap-census.c preloaded into one server: the heap blocks it allocates while recording is on and still
    holds when it stops, each with the size asked for, the size its allocator gave and who asked for it, read
    back from a file both map. `breakdown` sorts them into an idle stream's parts and matches libmicrohttpd's
    connection pools with the pages the kernel holds for them (/proc/PID/pagemap)."""

    HEADER_WORDS, ENTRY_WORDS = 8, 4

    def __init__(self, entries=1 << 20):
        directory = tempfile.mkdtemp(prefix="quire-census-")
        self.library = os.path.join(directory, "heap-census.so")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", self.library, os.path.join(BENCH, "heap-census.c"),
                        "-ldl"], check=True)
        self.path = os.path.join(directory, "census")
        self.entries = entries
        self.map = None

    def environment(self):
        """What the server's environment needs to carry the census."""
        return {"LD_PRELOAD": self.library, "HEAP_CENSUS_FILE": self.path, "HEAP_CENSUS_ENTRIES": str(self.entries)}

    def recording(self, on):
        if self.map is None:
            with open(self.path, "r+b") as f:
                self.map = mmap.mmap(f.fileno(), 0)
        struct.pack_into("<Q", self.map, 0, 1 if on else 0)

    def blocks(self):
        """(address, size asked, usable size, caller) of every block held; the count that did not fit."""
        unpack = struct.unpack_from
        capacity, _, lost = unpack("<3Q", self.map, 8)
        start = self.HEADER_WORDS * 8
        entries = [unpack("<4Q", self.map, start + index * 32) for index in range(capacity)]
        return [entry for entry in entries if entry[0] > 1], lost

    def breakdown(self, pid, count, pool_bytes, resident_growth):
        """An idle stream's bytes, per stream: the pool's resident part (its pages the kernel holds), the
        connection, the response and the server's own blocks (their sizes), the allocator's rounding of those
        sizes, and the rest of the resident growth (pages only partly used, the allocator's own, stacks)."""
        blocks, lost = self.blocks()
        modules = [(start, end, path) for start, end, path in memory_map(pid)]
        starts = [start for start, _, _ in modules]
        symbols = {}

        def where(address):
            index = bisect.bisect_right(starts, address) - 1
            if index < 0 or address >= modules[index][1]:
                return "", None
            path = modules[index][2]
            if "libmicrohttpd" not in path:
                return path, None
            if path not in symbols:
                base = min(start for start, _, p in modules if p == path)
                symbols[path] = (base, exported_functions(path))
            base, functions = symbols[path]
            offset = address - base
            for value, size, name in functions:
                if value <= offset < value + size:
                    return path, name
            return path, None

        parts = {"pool": 0, "connection": 0, "response": 0, "own": 0, "other": 0}
        sizes = {part: {} for part in parts}  # part: {(size asked, size given): blocks}
        rounding = 0
        pools = []
        server = os.path.realpath(f"/proc/{pid}/exe")
        for address, size, usable, who in blocks:
            path, function = where(who)
            if "libmicrohttpd" in path:
                if size == pool_bytes:
                    pools.append((address, size))
                    continue
                part = "response" if function and "response" in function else "connection"
            elif path == server:
                part = "own"
            else:
                part = "other"
            parts[part] += size
            rounding += usable - size
            sizes[part][(size, usable)] = sizes[part].get((size, usable), 0) + 1
        page = os.sysconf("SC_PAGE_SIZE")
        resident_pages, pool_pages = set(), set()
        with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
            for address, size in pools:
                first, last = address // page, (address + size - 1) // page
                pagemap.seek(first * 8)
                flags = struct.unpack(f"<{last - first + 1}Q", pagemap.read((last - first + 1) * 8))
                for index, word in enumerate(flags):
                    pool_pages.add(first + index)
                    if word >> 63:
                        resident_pages.add(first + index)
        # A resident page counts for the bytes of it that pools hold (a page two pools share counts once).
        resident = 0
        ranges = sorted(pools)
        for page_number in resident_pages:
            low, high = page_number * page, (page_number + 1) * page
            index = bisect.bisect_right(ranges, (high, 0))
            for address, size in ranges[max(0, index - 3):index]:
                resident += max(0, min(high, address + size) - max(low, address))
        parts["pool"] = resident
        named = sum(parts.values()) + rounding
        per = max(len(pools), 1)
        result = {name: value / count for name, value in parts.items()}
        result.update(rounding=rounding / count, rest=(resident_growth - named) / count, pools=len(pools),
                      pool_pages=len(resident_pages) / per, pool_bytes=pool_bytes, lost=lost,
                      blocks=len(blocks) / count, sizes=sizes)
        return result


def memory_map(pid):
    """(start, end, path) of every mapping of `pid`, by address."""
    regions = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            start, end = (int(value, 16) for value in fields[0].split("-"))
            regions.append((start, end, fields[5] if len(fields) > 5 else ""))
    return sorted(regions)


def exported_functions(path):
    """(offset, size, name) of the functions a shared library exports (nm -D)."""
    out = subprocess.run(["nm", "-D", "--defined-only", "-S", path], capture_output=True, text=True).stdout
    functions = []
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 4 and fields[2] in ("T", "t"):
            functions.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return functions


def describe_blocks(parts, count, least=0.5):
    """The blocks of each part held by at least `least` of the `count` streams each: how many a stream, of which
    size (asked/given by the allocator)."""
    lines = []
    for part, sizes in parts["sizes"].items():
        common = sorted(((blocks / count, size, usable) for (size, usable), blocks in sizes.items()
                         if blocks / count >= least), key=lambda entry: (-entry[1] * entry[0]))
        if common:
            lines.append(f"  {part}: " + ", ".join(f"{share:.2f} x {size}/{usable} B" for share, size, usable in common))
    return "\n".join(lines)


def describe_breakdown(parts):
    """One line: an idle stream's bytes by part (KB, per stream)."""
    kb = lambda value: f"{value / 1024:.2f}"
    line = (f"pool {kb(parts['pool'])} ({parts['pool_pages']:.2f} resident pages of its "
            f"{parts['pool_bytes'] // 1024} KiB), connection {kb(parts['connection'])}, response "
            f"{kb(parts['response'])}, own objects {kb(parts['own'])}, other libraries {kb(parts['other'])}, "
            f"allocator rounding {kb(parts['rounding'])}, rest {kb(parts['rest'])} "
            f"({parts['blocks']:.1f} blocks a stream)")
    if parts["lost"]:
        line += f"; {parts['lost']} blocks not counted (census table full)"
    return line
