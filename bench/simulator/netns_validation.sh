#!/usr/bin/env bash
# Fidelity against reality: runs the real trainer's workers in Linux network
# namespaces joined by veth links through a bridge (a star, as the simulator's
# star platform), shapes every link with tc tbf at several bandwidths,
# calibrates a platform on one of them and compares the iteration time each
# run measured with the time accordion-sim replays for it on the others.
#
#   sudo bench/simulator/netns_validation.sh [--build build/release] [--sim PATH] [--workers 2]
#        [--bandwidths 100mbit,1gbit,5gbit] [--calibrate-on 1gbit] [--scheme dense] [--out DIR]
#
# Needs root (network namespaces, tc) and a built accordion-train; where
# either is missing it says so and exits 0 having done nothing. Everything it
# creates - namespaces accsim-*, their veth ends and the 10.231.0.0/24 subnet
# between them - exists only inside its own namespaces and is removed on exit.
set -euo pipefail

BUILD=build/release
SIM=
WORKERS=2
BANDWIDTHS=100mbit,1gbit,5gbit
CALIBRATE_ON=1gbit
OUT=
EPOCHS=1
LIMIT_SAMPLES=6000
BATCH=128
SCHEME=dense  # communication-bound on purpose: the network is what is validated
ITERATIONS=20
# Small buckets give the MLP's dense gradients three collective sizes (5 KB,
# 132 KB, 804 KB): enough to tell latency from bandwidth when calibrating.
BUCKET_MB=0.004
RUN_TIMEOUT=900
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD=$2; shift 2 ;;
    --sim) SIM=$2; shift 2 ;;
    --workers) WORKERS=$2; shift 2 ;;
    --bandwidths) BANDWIDTHS=$2; shift 2 ;;
    --calibrate-on) CALIBRATE_ON=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --limit-samples) LIMIT_SAMPLES=$2; shift 2 ;;
    --batch-size) BATCH=$2; shift 2 ;;
    --scheme) SCHEME=$2; shift 2 ;;
    --trace-iterations) ITERATIONS=$2; shift 2 ;;
    --bucket-mb) BUCKET_MB=$2; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "netns_validation: unknown argument $1" >&2; exit 2 ;;
  esac
done

skip() { echo "SKIPPED: $*"; exit 0; }

TRAIN=$BUILD/bin/accordion-train
SIM=${SIM:-$BUILD/bin/accordion-sim}
[[ $(id -u) -eq 0 ]] || skip "needs root for network namespaces and tc (run with sudo)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "needs ip and tc (apt-get install iproute2)"
[[ -x $TRAIN ]] || skip "$TRAIN is not built (configure with the trainer on)"
[[ -x $SIM ]] || skip "$SIM is not built"
[[ ",$BANDWIDTHS," == *",$CALIBRATE_ON,"* ]] || { echo "netns_validation: --calibrate-on must be one of --bandwidths" >&2; exit 2; }
probe=accsim-probe-$$
ip netns add "$probe" 2>/dev/null || skip "cannot create network namespaces here (container without CAP_SYS_ADMIN?)"
ip netns del "$probe"

OUT=${OUT:-$(mktemp -d /tmp/accordion-netns-XXXXXX)}
mkdir -p "$OUT"
SWITCH=accsim-sw
NAMESPACES=("$SWITCH")
for ((i = 0; i < WORKERS; i++)); do NAMESPACES+=("accsim-w$i"); done

cleanup() {
  for ns in "${NAMESPACES[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup  # leftovers of an interrupted earlier run

# The star: worker i's eth0 <-> accsim-s$i, a port of the bridge in the switch namespace.
ip netns add "$SWITCH"
ip -n "$SWITCH" link add br0 type bridge
ip -n "$SWITCH" link set br0 up
ip -n "$SWITCH" link set lo up
for ((i = 0; i < WORKERS; i++)); do
  ns=accsim-w$i
  ip netns add "$ns"
  ip link add "accsim-w$i" type veth peer name "accsim-s$i"
  ip link set "accsim-w$i" netns "$ns"
  ip link set "accsim-s$i" netns "$SWITCH"
  ip -n "$ns" link set "accsim-w$i" name eth0
  # tbf lets a whole burst through at line rate and must take the largest
  # packet at once: small GSO packets keep both bursts and packets small.
  ip -n "$ns" link set eth0 gso_max_size 16384
  ip -n "$SWITCH" link set "accsim-s$i" gso_max_size 16384
  ip -n "$ns" addr add "10.231.0.$((i + 1))/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$SWITCH" link set "accsim-s$i" master br0 up
done

# Bytes per second of a tc rate such as 100mbit or 5gbit.
rate_bytes() {
  local r=${1,,}
  case "$r" in
    *gbit) echo $(( ${r%gbit} * 1000000000 / 8 )) ;;
    *mbit) echo $(( ${r%mbit} * 1000000 / 8 )) ;;
    *) echo "netns_validation: bandwidths look like 100mbit or 5gbit, not $1" >&2; exit 2 ;;
  esac
}

# Both directions of every link: the worker's egress and the switch port's.
shape() {
  local rate=$1 bytes burst
  bytes=$(rate_bytes "$rate")
  burst=$(( bytes / 4000 > 32768 ? bytes / 4000 : 32768 ))  # 0.25 ms at the rate, 2 GSO packets at least
  for ((i = 0; i < WORKERS; i++)); do
    ip netns exec "accsim-w$i" tc qdisc replace dev eth0 root tbf rate "$rate" burst "$burst" latency 50ms
    ip netns exec "$SWITCH" tc qdisc replace dev "accsim-s$i" root tbf rate "$rate" burst "$burst" latency 50ms
  done
}

train() {
  local rate=$1 trace=$OUT/$1.trace pids=() rc=0
  for ((i = 0; i < WORKERS; i++)); do
    ip netns exec "accsim-w$i" env RANK=$i WORLD_SIZE=$WORKERS LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 \
      MASTER_ADDR=10.231.0.1 MASTER_PORT=29500 GLOO_SOCKET_IFNAME=eth0 \
      timeout "$RUN_TIMEOUT" "$TRAIN" --model mlp --dataset fashion-mnist --epochs "$EPOCHS" \
      --batch-size "$BATCH" --scheme "$SCHEME" --limit-samples "$LIMIT_SAMPLES" \
      --trace-iterations "$ITERATIONS" --bucket-mb "$BUCKET_MB" --threads 1 --bind-addr "10.231.0.$((i + 1))" \
      --trace "$trace" --overwrite >"$OUT/$rate.rank$i.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || rc=$?; done
  [[ $rc -eq 0 ]] || { echo "netns_validation: training at $rate failed (logs in $OUT)" >&2; exit 1; }
}

IFS=, read -r -a RATES <<<"$BANDWIDTHS"
for rate in "${RATES[@]}"; do
  echo "training $WORKERS workers at $rate ..."
  shape "$rate"
  train "$rate"
done

"$SIM" calibrate "$OUT/$CALIBRATE_ON.trace" --out "$OUT/calibrated.json" | tee "$OUT/calibration.txt"

# What the calibration measured at CALIBRATE_ON is the wire plus the hosts'
# per-byte cost (copies, reductions, the stack): 1/B_eff = 1/rate + h. The
# per-byte cost h stays when the rate changes, so another rate's links get
# B = 1 / (1/rate + h).
CAL_GBPS=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['bandwidth_gbps'])" "$OUT/calibrated.json")
effective_gbps() {
  python3 -c "
import sys
cal, rate, cal_rate = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
h = max(0.0, 1 / cal - 1 / cal_rate)
print(1 / (1 / rate + h))" "$CAL_GBPS" "$(( $(rate_bytes "$1") * 8 ))e-9" "$(( $(rate_bytes "$CALIBRATE_ON") * 8 ))e-9"
}
{
  echo "| tc rate | link in the replay | measured ms/step | replayed ms/step | error |"
  echo "|---|---|---|---|---|"
  for rate in "${RATES[@]}"; do
    gbps=$(effective_gbps "$rate")
    "$SIM" replay "$OUT/$rate.trace" --platform "$OUT/calibrated.json" --bandwidth-gbps "$gbps" \
      --format json --out "$OUT/$rate.replay.json" 2>"$OUT/$rate.replay.log" ||
      { cat "$OUT/$rate.replay.log" >&2; exit 1; }
    python3 - "$OUT/$rate.replay.json" "$rate" "$CALIBRATE_ON" "$gbps" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["measured_vs_replayed"]
note = " (calibrated here)" if sys.argv[2] == sys.argv[3] else ""
print(f"| {sys.argv[2]}{note} | {float(sys.argv[4]):.3f} Gb/s | {j['measured_iteration_s'] * 1e3:.2f} "
      f"| {j['replayed_iteration_s'] * 1e3:.2f} | {j['relative_error'] * 100:+.1f} % |")
PY
  done
} | tee "$OUT/validation.md"
echo "results in $OUT"
