#!/usr/bin/python3
"""Where a running process's resident memory is (issue 32's breakdown, not a bench row).

    bench/lib/resident.py PID

Prints the resident KiB of each mapping (from /proc/PID/smaps), then for the process's own
executable the resident pages of each segment (text, read-only data, data) with the number of
runs of consecutive pages they form (from /proc/PID/pagemap: a few long runs mean the kernel
mapped large blocks around what was touched), and the resident text attributed to the Swift
module of the function at each page (`nm -n` of the executable; `$s<len><Module>` symbols, the
rest counted as C). Run as the process's owner."""

import bisect
import collections
import os
import re
import struct
import subprocess
import sys


def main():
    pid = int(sys.argv[1])
    exe = os.readlink(f"/proc/{pid}/exe")
    by_mapping = collections.Counter()
    name = None
    for line in open(f"/proc/{pid}/smaps"):
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            parts = line.split()
            name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
        elif line.startswith("Rss:"):
            by_mapping[name] += int(line.split()[1])
    print(f"resident by mapping (KiB), {sum(by_mapping.values())} in all:")
    for mapping, kib in by_mapping.most_common(16):
        print(f"  {kib:7d}  {mapping}")

    maps = []
    for line in open(f"/proc/{pid}/maps"):
        parts = line.split()
        if len(parts) >= 6 and parts[5] == exe:
            start, end = (int(x, 16) for x in parts[0].split("-"))
            maps.append((start, end, parts[1], int(parts[2], 16)))
    bias = min(start - offset for start, _, _, offset in maps)
    present = collections.defaultdict(list)
    with open(f"/proc/{pid}/pagemap", "rb") as pagemap:
        for start, end, perm, _ in maps:
            pagemap.seek(start // 4096 * 8)
            data = pagemap.read((end - start) // 4096 * 8)
            for i in range((end - start) // 4096):
                if struct.unpack_from("<Q", data, i * 8)[0] >> 63:
                    present[perm].append(start + i * 4096 - bias)
    print(f"the executable ({os.path.basename(exe)}), resident by segment:")
    for perm, pages in sorted(present.items()):
        runs = 1 + sum(1 for a, b in zip(pages, pages[1:]) if b != a + 4096)
        print(f"  {perm}  {len(pages) * 4:7d} KiB in {runs} runs")

    symbols = []
    out = subprocess.run(["nm", "-n", "--defined-only", exe], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in "tTwW":
            symbols.append((int(parts[0], 16), parts[2]))
    addresses = [address for address, _ in symbols]

    def module(symbol):
        match = re.match(r"\$s(\d+)(\w+)", symbol)
        if match:
            return match.group(2)[:int(match.group(1))]
        return "Swift (other)" if symbol.startswith("$s") else "C (runtime, BoringSSL, ICU, ...)"

    by_module = collections.Counter()
    for page in present.get("r-xp", []):
        index = bisect.bisect_right(addresses, page) - 1
        by_module[module(symbols[index][1]) if index >= 0 else "?"] += 4
    print("resident text by module (KiB):")
    for name, kib in by_module.most_common(24):
        print(f"  {kib:7d}  {name}")


if __name__ == "__main__":
    main()
