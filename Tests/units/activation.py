#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The contract actiond.service and actiond.socket rely on, checked against the
built daemon without a running systemd.

systemd-socket-activate (from the systemd package) plays the socket unit: it
binds the socket and execs the daemon with LISTEN_FDS/LISTEN_PID. This script
plays the service manager: it owns NOTIFY_SOCKET (a datagram socket) and sets
WATCHDOG_USEC. As with a real socket unit, the daemon is started by the first
client connecting (actionctl, whose connection waits in the backlog while the
daemon starts). It checks, in order:
  - READY=1 arrives (Type=notify), with a STATUS= line;
  - WATCHDOG=1 arrives at least every WATCHDOG_USEC (WatchdogSec=);
  - that first client gets its answer, and the daemon did not replace the
    socket file it was passed (same inode): the socket unit owns it;
  - SIGHUP (ExecReload=kill -HUP) gives RELOADING=1 with MONOTONIC_USEC, then
    READY=1 again;
  - SIGTERM gives STOPPING=1 and exit status 0.

Usage: activation.py ACTIOND ACTIONCTL CONFIG
"""

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

WATCHDOG_USEC = 1_000_000


def fail(message):
    print(f"test-activation: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def main(actiond, actionctl, config):
    with tempfile.TemporaryDirectory(prefix="actiond-activation.") as tmp:
        sock_path = os.path.join(tmp, "actiond.sock")
        notify_path = os.path.join(tmp, "notify")
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(notify_path)
        notify.settimeout(0.2)
        log = open(os.path.join(tmp, "actiond.log"), "w+")
        daemon = subprocess.Popen(
            ["systemd-socket-activate", "-l", sock_path,
             "-E", f"NOTIFY_SOCKET={notify_path}", "-E", f"WATCHDOG_USEC={WATCHDOG_USEC}",
             actiond, "--config", config, "--state-dir", os.path.join(tmp, "state"),
             "--log-level", "debug"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        messages = []
        # systemd-socket-activate execs the daemon (same pid) on the first connection.
        deadline = time.monotonic() + 60
        while not os.path.exists(sock_path):
            if time.monotonic() > deadline or daemon.poll() is not None:
                fail("systemd-socket-activate did not create the socket")
            time.sleep(0.05)
        inode = os.stat(sock_path).st_ino
        client = subprocess.Popen([actionctl, "--socket", sock_path, "--timeout", "20", "status"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

        def wait_for(predicate, what, timeout=60.0):
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if daemon.poll() is not None:
                    log.seek(0)
                    fail(f"daemon exited ({daemon.returncode}) waiting for {what}:\n{log.read()}")
                try:
                    data = notify.recv(4096).decode()
                except socket.timeout:
                    continue
                fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
                messages.append((time.monotonic(), fields))
                if predicate(fields):
                    return fields
            log.seek(0)
            fail(f"no {what} within {timeout} s; got {[m[1] for m in messages]}\n{log.read()}")

        try:
            wait_for(lambda f: f.get("READY") == "1", "READY=1")
            if not any("STATUS" in m[1] for m in messages):
                wait_for(lambda f: "STATUS" in f, "STATUS=")
            print("test-activation: READY=1 and STATUS= received")
            try:
                out, _ = client.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                client.kill()
                fail("the client that started the daemon got no answer")
            if client.returncode != 0:
                fail(f"actionctl status (the activating client): {client.returncode}\n{out}")
            if os.stat(sock_path).st_ino != inode:
                fail("the daemon replaced the socket file it was passed")
            print("test-activation: the activating client was answered on the passed socket")

            # Three watchdog pings, none further apart than the period.
            last = time.monotonic()
            for _ in range(3):
                wait_for(lambda f: f.get("WATCHDOG") == "1", "WATCHDOG=1", timeout=WATCHDOG_USEC / 1e6 * 1.5)
                now = time.monotonic()
                if now - last > WATCHDOG_USEC / 1e6:
                    fail(f"watchdog pings {now - last:.2f} s apart, period {WATCHDOG_USEC / 1e6} s")
                last = now
            print("test-activation: WATCHDOG=1 within the period")

            daemon.send_signal(signal.SIGHUP)
            reloading = wait_for(lambda f: f.get("RELOADING") == "1", "RELOADING=1")
            if "MONOTONIC_USEC" not in reloading:
                fail("RELOADING=1 without MONOTONIC_USEC")
            wait_for(lambda f: f.get("READY") == "1", "READY=1 after reload")
            print("test-activation: SIGHUP -> RELOADING=1 + MONOTONIC_USEC, READY=1")

            daemon.send_signal(signal.SIGTERM)
            wait_for(lambda f: f.get("STOPPING") == "1", "STOPPING=1")
            try:
                status = daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                fail("daemon still running 10 s after SIGTERM")
            if status != 0:
                fail(f"daemon exited with {status} after SIGTERM")
            print("test-activation: SIGTERM -> STOPPING=1, exit 0")
        finally:
            for process in (daemon, client):
                if process.poll() is None:
                    process.kill()
                    process.wait()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    main(*sys.argv[1:])
    print("test-activation: passed")
