# Sums an `ncu --csv --metrics gpu__time_duration.sum` log by kernel name: time per kernel kind,
# share of the step, and launches, largest first. With --sequence, lists the launches in order
# instead (where a step's time goes op by op, to find what to fuse).
# Usage: python3 ncu_kernel_summary.py [--sequence] LOG.
import csv
import re
import sys
from collections import defaultdict

sequence = "--sequence" in sys.argv
path = [a for a in sys.argv[1:] if a != "--sequence"][0]
rows = [r for r in csv.reader(open(path)) if len(r) > 10]
head = rows[0]
name_i, metric_i, value_i = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
grid_i = head.index("Grid Size") if "Grid Size" in head else None
block_i = head.index("Block Size") if "Block Size" in head else None


def short(name):
    name = name.replace("void ", "")
    name = re.sub(r"\(.*", "", name)  # the argument list
    name = re.sub(r"^(\w+::)*", "", name.split("<")[0]) + ("<" + name.split("<", 1)[1] if "<" in name else "")
    return re.sub(r"di::kernels::cuda::(_GLOBAL__N__\w+::)?", "", name)


launches = [r for r in rows[1:] if r[metric_i] == "gpu__time_duration.sum"]
if sequence:
    print(f"{'#':>4s} {'us':>8s} {'grid':>14s} {'block':>12s}  kernel")
    for n, r in enumerate(launches):
        grid = r[grid_i] if grid_i is not None else ""
        block = r[block_i] if block_i is not None else ""
        print(f"{n:4d} {float(r[value_i].replace(',', '')) / 1e3:8.2f} {grid:>14s} {block:>12s}  {short(r[name_i])[:70]}")
    sys.exit(0)

total = defaultdict(float)
count = defaultdict(int)
for r in launches:
    name = short(r[name_i])
    total[name] += float(r[value_i].replace(",", ""))
    count[name] += 1
all_ns = sum(total.values())
print(f"{'kernel':60s} {'us':>9s} {'share':>6s} {'n':>4s}")
for name, ns in sorted(total.items(), key=lambda kv: -kv[1]):
    print(f"{name[:60]:60s} {ns / 1e3:9.1f} {100 * ns / all_ns:5.1f}% {count[name]:4d}")
print(f"{'total':60s} {all_ns / 1e3:9.1f}")
