#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""One guest connection of the VM's restricted user-mode network, relayed to a host port.

    netfwd.py HOST PORT

qemu runs this for each TCP connection the guest opens to a forwarded address (vmrun.py's
`guestfwd=tcp:ADDR:PORT-cmd:...`): the guest's side is this process's stdin/stdout (one
socket), the host's side a TCP connection to HOST:PORT. It copies both ways until either
side closes, then exits: when qemu ends, its end of the socket closes and so does this.
Nothing goes to stderr (it is the same socket as stdout: the guest would read it).
"""

import os
import select
import socket
import sys


def main():
    # stderr is the guest's socket too: a traceback must not land in its stream.
    os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
    host, port = sys.argv[1], int(sys.argv[2])
    try:
        upstream = socket.create_connection((host, port), timeout=10)
    except OSError:
        return 1
    upstream.settimeout(None)
    guest_in, guest_out = 0, 1
    while True:
        readable, _, _ = select.select([guest_in, upstream], [], [])
        if guest_in in readable:
            data = os.read(guest_in, 65536)
            if not data:
                return 0
            upstream.sendall(data)
        if upstream in readable:
            data = upstream.recv(65536)
            if not data:
                return 0
            view = memoryview(data)
            while view:
                view = view[os.write(guest_out, view):]


if __name__ == "__main__":
    try:
        sys.exit(main())
    except OSError:
        sys.exit(1)
