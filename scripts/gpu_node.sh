#!/usr/bin/env bash
# Issue 33 on the lent 2- or 4-GPU machine: what `check --json` reports about the node (ECC, row remapping, clock
# events, PCIe link, P2P, NVLink links and state, topology) side by side with nvidia-smi's own answers, then
# `check --ready` with its timing (each GPU's phases, 3 warm runs) and benchmarks/node_health_bench.py. Reads only.
# Run from the repository root (PYTHONPATH=. or `pip install --no-deps -e .`):  bash scripts/gpu_node.sh
# Every step runs under `timeout`; the whole script finishes well under 4 minutes.
set -u
out=${OUT:-/tmp/gpu-node}; mkdir -p "$out"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 NO_COLOR=1
py=${PYTHON:-python3}
step() { echo; echo "== $*"; }
{
step "machine"; date -u; timeout 20 nvidia-smi -L; timeout 20 nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
fields=index,pci.bus_id,persistence_mode,ecc.mode.current,ecc.errors.uncorrected.volatile.total,remapped_rows.pending,remapped_rows.failure,REASONS,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max
query() {  # nvidia-smi's values into $out/$1; clock event reasons move (gpu_idle clears while a kernel runs), so
  # they are read just before and just after check --json, and before check --ready wakes the GPUs
  for reasons in clocks_event_reasons.active clocks_throttle_reasons.active; do  # the name before driver 535
    timeout 30 nvidia-smi --query-gpu="${fields/REASONS/$reasons}" --format=csv,noheader > "$out/$1" && break
  done
}
query smi-query-before.csv
step "cudnn-doctor check --json (timed)"
TIMEFORMAT="check wall %R s"
time timeout 60 $py -m cudnn_doctor check --json --output-file "$out/check.json"; echo "exit=$?"
query smi-query.csv
echo "query ($reasons), just before check --json:"; cat "$out/smi-query-before.csv"
echo "just after:"; cat "$out/smi-query.csv"
step "cudnn-doctor check --ready --json (timed)"
TIMEFORMAT="check --ready wall %R s"
time timeout 60 $py -m cudnn_doctor check --ready --json --output-file "$out/ready.json"; echo "exit=$?"
step "nvidia-smi outputs (saved beside)"
timeout 30 nvidia-smi -q > "$out/smi-q.txt"; echo "nvidia-smi -q exit=$? ($(wc -l < "$out/smi-q.txt") lines)"
step "nvidia-smi topo -m"; timeout 30 nvidia-smi topo -m | tee "$out/topo-m.txt"
step "nvidia-smi topo -p2p r"; timeout 30 nvidia-smi topo -p2p r | tee "$out/topo-p2p.txt"
step "nvidia-smi nvlink -s"; timeout 30 nvidia-smi nvlink -s | tee "$out/nvlink-s.txt" | head -60
step "nvidia-smi nvlink -e (error counters; first 40 lines)"; timeout 30 nvidia-smi nvlink -e > "$out/nvlink-e.txt"
echo "exit=$?"; head -40 "$out/nvlink-e.txt"
step "nvidia-smi -q: the sections compared"
grep -E "^GPU |Persistence Mode|^ +ECC Mode|^ +Current +: (En|Dis)abled|Remapped Rows|^ +Pending +:|Remapping Failure|Clocks Event Reasons|^ +(HW|SW) .*(Slowdown|Power Cap|Thermal)|^ +PCIe Generation|^ +Link Width|^ +(Max|Current) +: (x?[0-9]+)$|Volatile|DRAM Uncorrectable" \
    "$out/smi-q.txt" | head -150
step "side by side: cudnn-doctor check --json | nvidia-smi"
timeout 30 $py - "$out" <<'PY'
import csv, json, re, sys
out = sys.argv[1]
doc = json.load(open(out + "/check.json"))
node = doc["facts"]["node"]
rows = list(csv.reader(open(out + "/smi-query.csv"), skipinitialspace=True))
before = list(csv.reader(open(out + "/smi-query-before.csv"), skipinitialspace=True))
ready_node = json.load(open(out + "/ready.json"))["facts"]["node"]  # the NVLink counters are read with --ready
bits = [("gpu_idle", 0x1), ("applications_clocks_setting", 0x2), ("sw_power_cap", 0x4), ("hw_slowdown", 0x8),
        ("sync_boost", 0x10), ("sw_thermal_slowdown", 0x20), ("hw_thermal_slowdown", 0x40),
        ("hw_power_brake_slowdown", 0x80), ("display_clock_setting", 0x100)]
mismatch = 0
def hex_mask(text):
    """nvidia-smi's clocks_event_reasons.active, a hex bitmask with or without its 0x; None when it is no number."""
    try:
        return int(text.strip(), 16)
    except ValueError:
        return None
def show(what, ours, theirs):
    global mismatch
    same = str(ours) == str(theirs)
    mismatch += not same
    print("  %-34s %-28s %-28s %s" % (what, ours, theirs, "same" if same else "DIFFERENT"))
print("  %-34s %-28s %-28s" % ("", "cudnn-doctor", "nvidia-smi"))
if node.get("health_error"):
    print("  health task failed: %s" % node["health_error"])
for g, r in zip(node["gpus"], rows):
    i = g["index"]
    print(" GPU %d %s" % (i, g["bus_id"]))
    show("bus id", g["bus_id"], r[1].lower()[-12:])
    show("persistence", {True: "Enabled", False: "Disabled", None: "?"}[g["persistence_mode"]], r[2])
    show("ECC mode", {True: "Enabled", False: "Disabled", None: "[N/A]"}[g["ecc_enabled"]], r[3])
    show("ECC uncorrected volatile", g["ecc_volatile_uncorrected"], r[4])
    rr = g.get("remapped_rows") or {}
    show("row remap pending", {True: "Yes", False: "No"}.get(rr.get("pending"), "[N/A]"), r[5])
    show("row remap failure", {True: "Yes", False: "No"}.get(rr.get("failed"), "[N/A]"), r[6])
    def reasons(text):  # a hex bitmask: "0x0000000000000001"
        mask = hex_mask(text)
        return "?(%s)" % text if mask is None else ",".join(sorted(n for n, b in bits if mask & b)) or "-"
    ours, after = ",".join(sorted(g["clock_events"] or [])) or "-", reasons(r[7])
    first = reasons(before[i][7]) if i < len(before) else after
    # check read them between nvidia-smi's two reads: the same as either is the same value at another instant
    theirs = ours if ours in (first, after) else first if first == after else "%s, then %s" % (first, after)
    show("clock event reasons", ours, theirs)
    p = g["pcie"]
    show("PCIe gen current/max", "%s/%s" % (p.get("gen"), p.get("gen_max")), "%s/%s" % (r[8], r[9]))
    show("PCIe width current/max", "%s/%s" % (p.get("width"), p.get("width_max")), "%s/%s" % (r[10], r[11]))
# nvlink -s: "GPU i: ..." then "\t Link n: <speed>" or "<inactive>"
links, current = {}, None
for line in open(out + "/nvlink-s.txt"):
    m = re.match(r"GPU (\d+):", line)
    if m:
        current = int(m.group(1)); links[current] = [0, 0]
    elif current is not None and re.match(r"\s+Link \d+:", line):
        links[current][1] += 1
        links[current][0] += "inactive" not in line.lower()
for g in node["gpus"]:
    up, total = links.get(g["index"], [0, 0])
    show("GPU %d NVLinks up/total" % g["index"], "%d/%d" % (g["nvlinks"] - len(g["nvlinks_down"]), g["nvlinks"]),
         "%d/%d" % (up, total))
# nvlink -e: "GPU i: ..." then per link "Link n: <Name> Errors: <count>" (one counter a line, or several on one);
# summed per GPU by kind, beside check --ready's sums over the active links (replay, recovery, crc).
counters, current = {}, None
for line in open(out + "/nvlink-e.txt"):
    m = re.match(r"GPU (\d+):", line)
    if m:
        current = int(m.group(1)); counters[current] = {}
        continue
    for name, value in re.findall(r"([A-Za-z][A-Za-z ]*?)(?: Errors?)?\s*:\s*(\d+)\b", line):
        kind = next((k for k in ("replay", "recovery", "crc") if k in name.lower()), None)
        if current is not None and kind and not name.lower().strip().startswith("link"):
            counters[current][kind] = counters[current].get(kind, 0) + int(value)
for g in ready_node["gpus"]:  # every counter either side shows: one only one side shows is a difference
    e, theirs = g.get("nvlink_errors") or {}, counters.get(g["index"], {})
    for kind in sorted(set(e) | set(theirs), key=("replay", "recovery", "crc").index):
        show("GPU %d NVLink %s errors" % (g["index"], kind), e.get(kind), theirs.get(kind))
def matrix(path):
    grid = {}
    lines = [l.rstrip("\n") for l in open(path) if l.strip()] or [""]
    header = lines[0].split()
    for l in lines[1:]:
        cells = l.split()
        if not cells or not re.fullmatch(r"GPU\d+", cells[0]):
            continue
        for name, cell in zip(header, cells[1:]):
            if re.fullmatch(r"GPU\d+", name):
                grid[(int(cells[0][3:]), int(name[3:]))] = cell
    return grid
topo, p2p = matrix(out + "/topo-m.txt"), matrix(out + "/topo-p2p.txt")
for pair in node["pairs"]:
    a, b = pair["gpus"]
    show("GPU%d-GPU%d topology" % (a, b), pair["link"], topo.get((a, b)))
    show("GPU%d-GPU%d P2P read" % (a, b), pair["p2p_read"], p2p.get((a, b)))
print("\n %d value(s) differ" % mismatch)
print(" findings:", ", ".join("%s %s" % (f["id"], f["severity"]) for f in doc["findings"]) or "none")
print(" check --ready findings:", ", ".join("%s %s" % (f["id"], f["severity"]) for f in json.load(open(out + "/ready.json"))["findings"]) or "none",
      "| CD221 (NVLink errors counted) must not fire on a healthy node")
r = json.load(open(out + "/ready.json"))
ready = r["facts"]["node"]["ready"] or []
print(" --ready: %d of %d GPUs ran the kernel; per GPU ms: %s (the node, one GPU after another: %.0f ms); CD218 %s;"
      " check --ready's own run %.0f ms" % (
    sum(x["ok"] for x in ready), len(ready), [x["ms"] for x in ready], sum(x["ms"] or 0 for x in ready),
    "fired" if any(f["id"] == "CD218" for f in r["findings"]) else "did not fire", r["duration_s"] * 1000))
for x in ready:
    print("   GPU %s %s ok=%s ms=%s phases=%s %s" % (x["index"], x["bus_id"], x["ok"], x["ms"], x.get("phases_ms"),
                                                  "" if x["ok"] else "step=%s error=%s" % (x["step"], x["error"])))
print(" xid events since boot:", node["xid_events"] or "none", "| kernel log:", node["kernel_log"])
print(" iommu:", node["iommu"], "| acs:", node["acs"] or "none", "| acs unreadable:", node["acs_unreadable"])
print(" container runtime:", node["container"])
PY
step "check --ready, 3 more runs (warm): wall and each GPU's ms"
for run in 1 2 3; do
  start=$(date +%s%N); timeout 60 $py -m cudnn_doctor check --ready --json --output-file "$out/ready-$run.json"
  code=$?; end=$(date +%s%N)
  $py -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["facts"]["node"]["ready"] or []; print("run", sys.argv[2], "exit", sys.argv[3], "wall", sys.argv[4], "ms; per GPU", [(x["ms"], x["ok"]) for x in r], "node readiness %.0f ms" % sum(x["ms"] or 0 for x in r))' \
      "$out/ready-$run.json" "$run" "$code" "$(( (end - start) / 1000000 ))"
done
step "kernel log source (/dev/kmsg, else journalctl -k -b) and device nodes"
ls -l /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia-modeset /dev/nvidiactl 2>&1
$py -c 'import json,sys; n=json.load(open(sys.argv[1]))["facts"]["node"]; print("kernel_log:", n["kernel_log"], "| xid events:", len(n["xid_events"]))' "$out/check.json"
step "cudnn-doctor check --ready (human, GPUs section)"
timeout 60 $py -m cudnn_doctor check --ready -v --no-color | sed -n '/GPUs/,/CUDA toolkits/p'
step "benchmarks/node_health_bench.py"
timeout 150 $py benchmarks/node_health_bench.py --runs 5
} 2>&1 | tee "$out/gpu-node.txt"
