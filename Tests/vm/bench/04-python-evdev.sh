# SPDX-License-Identifier: Apache-2.0
# Bench: a python-evdev press/hold script (Tests/vm/bench/hold.py, what users write today),
# with the host's python3 and python3-evdev shared read-only over 9p.
# timeout: 400
. "$VM_LIB"
. /vm/bench-lib.sh

modprobe virtio_pci && modprobe 9pnet_virtio && modprobe 9p || skip "no 9p modules"
mkdir -p /host
grep -q " /host " /proc/mounts || mount -t 9p -o trans=virtio,version=9p2000.L,ro hostusr /host || skip "no 9p share of the host's /usr"
loader=/host/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
[ -x "$loader" ] && [ -e /host/bin/python3 ] || skip "no python3 in the host's /usr"

bdev_start actiond-bench-python
# The host's python, its libraries found through the host's loader, its stdlib under /host.
PYTHONHOME=/host PYTHONDONTWRITEBYTECODE=1 spawn py.out "$loader" --library-path /host/lib/x86_64-linux-gnu \
  /host/bin/python3 /vm/bench/hold.py \
  "$BDEV_NODE" "$BENCH_HOLD_MS" "$BENCH_N" "$BENCHTOOL" record python "$WORK/python-rec.log"
PY_PID=$SPAWN_PID
wait_for_line py.out '^ready' 60000
memory start "$PY_PID" >mem.log
step "python-evdev, $BENCH_N holds"
hold_presses
memory holds "$PY_PID" >>mem.log
kill -TERM "$PY_PID"
bdev_stop
