# Sums an `ncu --csv --metrics gpu__time_duration.sum` log by kernel name: time per kernel kind,
# share of the step, and launches, largest first. Usage: python3 ncu_kernel_summary.py LOG.
import csv
import re
import sys
from collections import defaultdict

rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head = rows[0]
name_i, metric_i, value_i = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
total = defaultdict(float)
count = defaultdict(int)
for r in rows[1:]:
    if r[metric_i] != "gpu__time_duration.sum":
        continue
    name = r[name_i].replace("void ", "")
    name = re.sub(r"\(.*", "", name)               # the argument list
    name = re.sub(r"^(\w+::)*", "", name.split("<")[0]) + ("<" + name.split("<", 1)[1] if "<" in name else "")
    name = re.sub(r"di::kernels::cuda::(_GLOBAL__N__\w+::)?", "", name)
    total[name] += float(r[value_i].replace(",", ""))
    count[name] += 1
all_ns = sum(total.values())
print(f"{'kernel':60s} {'us':>9s} {'share':>6s} {'n':>4s}")
for name, ns in sorted(total.items(), key=lambda kv: -kv[1]):
    print(f"{name[:60]:60s} {ns / 1e3:9.1f} {100 * ns / all_ns:5.1f}% {count[name]:4d}")
print(f"{'total':60s} {all_ns / 1e3:9.1f}")
