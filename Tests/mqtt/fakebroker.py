# SPDX-License-Identifier: Apache-2.0
"""A scripted MQTT 3.1.1 server for what a real broker will not do on request: deliver a
QoS 1 message again after a reconnect, with the same packet id (MQTT 3.1.1, 4.4).

It speaks just enough of the protocol (OASIS MQTT 3.1.1, chapter 3) to carry a client:
CONNECT/CONNACK, SUBSCRIBE/SUBACK, PUBLISH with PUBACK both ways, PINGREQ/PINGRESP."""

import socket
import struct
import threading

from harness import wait_for


def encode_length(n):
    out = bytearray()
    while True:
        byte = n % 128
        n //= 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def utf8(s):
    b = s.encode()
    return struct.pack("!H", len(b)) + b


class Session:
    def __init__(self, conn):
        self.conn = conn
        self.lock = threading.Lock()
        self.subscriptions = []
        self.publishes = []  # (topic, payload)
        self.pubacks = set()
        self.closed = False
        self.connect_packet = self.read_packet()
        ptype, body = self.connect_packet
        assert ptype >> 4 == 1, f"expected CONNECT, got packet type {ptype >> 4}"
        name_len = struct.unpack("!H", body[:2])[0]
        self.protocol_level = body[2 + name_len]
        flags = body[3 + name_len]
        self.clean_session = bool(flags & 0x02)
        self.conn.sendall(bytes([0x20, 2, 0, 0]))  # CONNACK, accepted
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def read_exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.conn.recv(n - len(data))
            if not chunk:
                raise EOFError
            data += chunk
        return data

    def read_packet(self):
        first = self.read_exact(1)[0]
        length, shift = 0, 0
        while True:
            b = self.read_exact(1)[0]
            length |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        return first, self.read_exact(length)

    def run(self):
        try:
            while True:
                first, body = self.read_packet()
                kind = first >> 4
                if kind == 3:  # PUBLISH from the client
                    qos = (first >> 1) & 3
                    tlen = struct.unpack("!H", body[:2])[0]
                    topic = body[2:2 + tlen].decode()
                    rest = body[2 + tlen:]
                    if qos:
                        mid = rest[:2]
                        rest = rest[2:]
                        self.conn.sendall(bytes([0x40, 2]) + mid)
                    with self.lock:
                        self.publishes.append((topic, rest))
                elif kind == 8:  # SUBSCRIBE
                    mid = body[:2]
                    pos, granted = 2, []
                    while pos < len(body):
                        tlen = struct.unpack("!H", body[pos:pos + 2])[0]
                        with self.lock:
                            self.subscriptions.append(body[pos + 2:pos + 2 + tlen].decode())
                        granted.append(min(1, body[pos + 2 + tlen]))
                        pos += 3 + tlen
                    self.conn.sendall(bytes([0x90]) + encode_length(2 + len(granted)) + mid + bytes(granted))
                elif kind == 4:  # PUBACK
                    with self.lock:
                        self.pubacks.add(struct.unpack("!H", body[:2])[0])
                elif kind == 12:  # PINGREQ
                    self.conn.sendall(bytes([0xD0, 0]))
                elif kind == 14:  # DISCONNECT
                    break
        except (EOFError, OSError):
            pass
        self.closed = True

    def wait_subscribed(self, topic):
        wait_for(f"a subscription to {topic}", lambda: topic in self.subscriptions)

    def published(self, topic):
        with self.lock:
            return [p for t, p in self.publishes if t == topic]

    def send_publish(self, topic, payload, mid, qos=1, dup=False):
        first = 0x30 | (qos << 1) | (0x08 if dup else 0)
        body = utf8(topic) + (struct.pack("!H", mid) if qos else b"") + payload
        self.conn.sendall(bytes([first]) + encode_length(len(body)) + body)

    def wait_puback(self, mid):
        return wait_for(f"PUBACK {mid}", lambda: mid in self.pubacks)

    def close(self):
        try:
            self.conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.conn.close()


class FakeBroker:
    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]

    def accept(self, timeout=20):
        self.sock.settimeout(timeout)
        conn, _ = self.sock.accept()
        conn.settimeout(None)
        return Session(conn)

    def close(self):
        self.sock.close()
