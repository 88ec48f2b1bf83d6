# SPDX-License-Identifier: Apache-2.0
"""Press/hold on one key with python-evdev, the way users write it today: a select() loop
with the hold deadline as its timeout, the command started with subprocess at the deadline.

    hold.py DEVICE THRESHOLD_MS COUNT COMMAND...   (ends after COUNT holds)
"""
import select
import subprocess
import sys
import time

import evdev

device = evdev.InputDevice(sys.argv[1])
threshold = int(sys.argv[2]) / 1000
count = int(sys.argv[3])
command = sys.argv[4:]
children = []
deadline = None
holds = 0
print("ready", flush=True)
while True:
    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
    readable, _, _ = select.select([device], [], [], timeout)
    if not readable and deadline is not None:
        deadline = None
        children.append(subprocess.Popen(command))
        holds += 1
        continue
    for event in device.read():
        if event.type == evdev.ecodes.EV_KEY and event.code == evdev.ecodes.KEY_PROG1:
            if event.value == 1:
                deadline = time.monotonic() + threshold
            elif event.value == 0:
                deadline = None
    children = [child for child in children if child.poll() is None]
