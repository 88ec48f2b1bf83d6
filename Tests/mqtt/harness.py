# SPDX-License-Identifier: Apache-2.0
"""Processes for the MQTT tier: Debian's mosquitto on loopback, a real actiond, the bridge,
and a subscriber that records what a Home Assistant would see. Every wait has a deadline."""

import fcntl
import json
import os
import select
import pwd
import signal
import socket
import struct
import subprocess
import termios
import threading
import time

DEADLINE = float(os.environ.get("MQTT_TEST_DEADLINE", "20"))


def wait_for(what, predicate, timeout=DEADLINE):
    """Polls `predicate` (cheap, in-process state) until it returns a truthy value."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """mosquitto with a generated configuration (no system service, no persistence)."""

    def __init__(self, workdir, port=None, extra=""):
        self.workdir = workdir
        self.port = port or free_port()
        self.extra = extra
        self.proc = None
        self.log = os.path.join(workdir, "mosquitto.log")

    def start(self):
        conf = os.path.join(self.workdir, "mosquitto.conf")
        with open(conf, "w") as f:
            # `user`: run as whoever runs the tests (as root, mosquitto would otherwise switch
            # to the user mosquitto, who cannot read this private temporary directory).
            f.write(f"user {pwd.getpwuid(os.getuid()).pw_name}\n"
                    f"listener {self.port} 127.0.0.1\npersistence false\nlog_dest file {self.log}\n"
                    "log_type all\n" + (self.extra or "allow_anonymous true\n"))
        self.proc = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

        def listening():
            if self.proc.poll() is not None:
                raise AssertionError(f"mosquitto exited: {open(self.log).read() if os.path.exists(self.log) else ''}")
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        wait_for("mosquitto to listen", listening)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Process:
    def __init__(self, name, argv, workdir, env=None):
        self.name = name
        self.argv = argv
        self.log = os.path.join(workdir, f"{name}.log")
        self.env = env
        self.proc = None

    def start(self):
        self.out = open(self.log, "a")
        self.proc = subprocess.Popen(self.argv, stdout=self.out, stderr=subprocess.STDOUT, env=self.env)
        return self

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def text(self):
        with open(self.log) as f:
            return f.read()

    def lines(self, word):
        return [l for l in self.text().splitlines() if word in l]


def actiond_config(workdir):
    lamp = os.path.join(workdir, "lamp")
    lamp_log = os.path.join(workdir, "lamp.log")
    bell_log = os.path.join(workdir, "bell.log")
    with open(lamp, "w") as f:
        f.write("0\n")
    config = {
        "socket": {"path": os.path.join(workdir, "actiond.sock")},
        "stateDirectory": os.path.join(workdir, "state"),
        "controlsDirectory": os.path.join(workdir, "controls.d"),
        "buttons": [{"name": "action", "key": "KEY_PROG1", "match": {"tag": "actiond"}, "holdThresholdMs": 600}],
        "controls": [
            {"kind": "org.test.timer", "type": "toggle", "displayName": "Timer", "actionHint": {"on": "Stop", "off": "Start"},
             "intent": {"type": "state"}, "value": {"type": "store", "initial": False}},
            {"kind": "org.test.lamp", "type": "toggle", "displayName": "Lamp", "actionHint": {"on": "Turn Off", "off": "Turn On"},
             "intent": {"type": "exec", "argv": ["/bin/sh", "-c", f'echo "$ACTIOND_VALUE" > {lamp}; echo "$ACTIOND_VALUE" >> {lamp_log}']},
             "value": {"type": "file", "path": lamp}},
            {"kind": "org.test.bell", "type": "button", "displayName": "Bell", "actionHint": "Ring",
             "intent": {"type": "exec", "argv": ["/bin/sh", "-c", f"echo ring >> {bell_log}"]}},
        ],
        "assignments": {"action": {"hold": "org.test.timer", "doublePress": "org.test.bell"}},
    }
    return config, lamp_log, bell_log


def file_lines(path):
    """The lines of a file some intent appends to (none before it first ran)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return f.read().splitlines()


def count_lines(path):
    return len(file_lines(path))


def actiond_exchange(socket_path, request, timeout=DEADLINE):
    """One request to actiond on a fresh connection: (its hello, the reply or error object).
    The HA tier (Tests/ha/test_ha.py) asks actiond this way too."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(socket_path)
        f = s.makefile("rwb")
        hello = json.loads(f.readline())
        f.write((json.dumps(dict(request, id=1)) + "\n").encode())
        f.flush()
        while True:
            line = f.readline()
            if not line:
                raise OSError("actiond closed the connection")
            m = json.loads(line)
            if m.get("type") in ("reply", "error") and m.get("id") == 1:
                return hello, m


class Actiond:
    def __init__(self, bin_dir, workdir, config):
        self.bin_dir = bin_dir
        self.workdir = workdir
        self.socket = config["socket"]["path"]
        os.makedirs(config["controlsDirectory"], exist_ok=True)
        self.config_path = os.path.join(workdir, "actiond.json")
        with open(self.config_path, "w") as f:
            json.dump(config, f)
        self.process = None

    def start(self):
        self.process = Process("actiond", [os.path.join(self.bin_dir, "actiond"), "--config", self.config_path,
                                           "--log-level", "debug"], self.workdir).start()
        wait_for("actiond's socket", lambda: self.try_request({"request": "ping"}) is not None)
        return self

    def try_request(self, request):
        try:
            return self.request(request)
        except OSError:
            return None

    def request(self, request):
        """One request on a fresh connection; returns the reply or error object."""
        return actiond_exchange(self.socket, request)[1]

    def kill(self, sig=signal.SIGKILL):
        self.process.kill(sig)


class Bridge:
    def __init__(self, bin_dir, workdir, name, args, prefix=()):
        self.argv = list(prefix) + [os.path.join(bin_dir, "actiond-mqtt"), "--log-level", "debug"] + args
        self.workdir = workdir
        self.name = name
        self.process = Process(name, self.argv, workdir)

    def start(self):
        self.process.start()
        return self

    def kill(self, sig=signal.SIGKILL):
        self.process.kill(sig)


class Subscriber:
    """A Home Assistant stand-in: records every message (topic, payload, retain) with its time."""

    def __init__(self, port, topics=("homeassistant/#", "actiond/#"), client_id="test-ha", tls=None, auth=None):
        self.messages = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        # Imported here, not at the top: the HA tier imports this file's socket helpers on a
        # host that need not have paho (mk/ha.mk installs no python3-paho-mqtt).
        import paho.mqtt.client as mqtt
        self.client = mqtt.Client(client_id=client_id, protocol=mqtt.MQTTv311, clean_session=True)
        self.client.on_connect = lambda c, u, f, rc: ([c.subscribe(t, qos=1) for t in topics], self.connected.set())
        self.client.on_message = self._message
        if tls:
            self.client.tls_set(ca_certs=tls["ca"], certfile=tls.get("cert"), keyfile=tls.get("key"))
        if auth:
            self.client.username_pw_set(*auth)
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        wait_for("the subscriber to connect", self.connected.is_set)

    def _message(self, client, userdata, m):
        with self.lock:
            self.messages.append((m.topic, m.payload.decode("utf-8", "replace"), bool(m.retain), time.monotonic()))

    def all(self, topic=None):
        with self.lock:
            return [m for m in self.messages if topic is None or m[0] == topic]

    def last(self, topic):
        got = self.all(topic)
        return got[-1][1] if got else None

    def mark(self):
        with self.lock:
            return len(self.messages)

    def since(self, mark, topic=None):
        with self.lock:
            return [m for m in self.messages[mark:] if topic is None or m[0] == topic]

    def wait_payload(self, topic, payload, since=0, timeout=DEADLINE):
        return wait_for(f"{payload!r} on {topic}",
                        lambda: any(m[1] == payload for m in self.since(since, topic)), timeout)

    def publish(self, topic, payload, qos=1, retain=False):
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish()

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def tcp_nodelay(pid, port):
    """TCP_NODELAY of process `pid`'s TCP socket to 127.0.0.1:`port`, read with getsockopt on
    a duplicate of it (pidfd_getfd, Linux 5.6; allowed on a child of this process). None
    where the kernel or a sandbox refuses (then the bridge's own diagnostics say it)."""
    import ctypes
    inodes = {}
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                for row in f.read().splitlines()[1:]:
                    fields = row.split()
                    if int(fields[2].split(":")[1], 16) == port:
                        inodes[fields[9]] = True
        except OSError:
            pass
    fd = None
    for entry in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{entry}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            fd = int(entry)
    if fd is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    SYS_pidfd_getfd = 438  # the same number on x86_64 and arm64
    try:
        pidfd = os.pidfd_open(pid)
    except (OSError, AttributeError):
        return None
    try:
        copy = libc.syscall(SYS_pidfd_getfd, pidfd, fd, 0)
        if copy < 0:
            return None
        with socket.socket(fileno=copy) as s:
            return bool(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    finally:
        os.close(pidfd)


TLS_NAME = "mqtt-broker.test"


def make_pki(workdir):
    """A CA, a server certificate for 127.0.0.1 and TLS_NAME, and a client certificate,
    made with openssl."""
    def run(*argv):
        subprocess.run(argv, check=True, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=actiond test CA")
    with open(os.path.join(workdir, "san.ext"), "w") as f:
        f.write(f"subjectAltName=IP:127.0.0.1,DNS:{TLS_NAME}\n")
    for name, ext in (("server", ["-extfile", "san.ext"]), ("client", [])):
        run("openssl", "req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        run("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "2", *ext)
    return {k: os.path.join(workdir, v) for k, v in
            (("ca", "ca.pem"), ("server_cert", "server.pem"), ("server_key", "server.key"),
             ("cert", "client.pem"), ("key", "client.key"))}


class CutProxy:
    """A TCP proxy on loopback between the bridge and the broker that can cut the network
    without closing anything: `cut()` stops forwarding in both directions and keeps every
    socket open (bytes stay queued in the kernel, no FIN, no RST: what the two ends see
    when a cable is pulled or a Wi-Fi drops); `restore()` forwards again. A connection made
    during the cut is accepted and held without a byte reaching the broker, as when its
    handshake is lost on the way: the bridge's CONNECT gets no CONNACK. When the path is
    back, a held connection the client has given up on (FIN seen) is closed; one still
    open is connected to the broker and forwarded, as a retransmitted handshake would."""

    def __init__(self, upstream_port):
        self.upstream = ("127.0.0.1", upstream_port)
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.is_cut = False
        self.pairs = {}  # socket -> its peer
        self.clients = set()  # the sockets accepted from the bridge
        self.held = []
        self.accepted = 0
        self.held_total = 0
        self.wake_r, self.wake_w = os.pipe()
        self.closed = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def cut(self):
        with self.lock:
            self.is_cut = True
        os.write(self.wake_w, b"x")

    def restore(self):
        with self.lock:
            self.is_cut = False
            held, self.held = self.held, []
        for s in held:
            p = select.poll()
            p.register(s, select.POLLRDHUP)
            if p.poll(0):
                s.close()
                continue
            self._connect(s)
        os.write(self.wake_w, b"x")

    def counts(self):
        with self.lock:
            return {"accepted": self.accepted, "held": self.held_total, "open": len(self.pairs) // 2}

    def stuck_from_clients(self):
        """Bytes the bridge sent that wait, unread, in the proxy's sockets (during a cut)."""
        with self.lock:
            clients = list(self.clients)
        total = 0
        for c in clients:
            try:
                total += struct.unpack("i", fcntl.ioctl(c.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0]
            except OSError:
                pass
        return total

    def _connect(self, client):
        up = socket.create_connection(self.upstream, timeout=DEADLINE)
        up.settimeout(None)
        with self.lock:
            self.pairs[client] = up
            self.pairs[up] = client
            self.clients.add(client)

    def _close_pair(self, s):
        with self.lock:
            peer = self.pairs.pop(s, None)
            if peer is not None:
                self.pairs.pop(peer, None)
            self.clients.discard(s)
            self.clients.discard(peer)
        for x in (s, peer):
            if x is not None:
                x.close()

    def _run(self):
        while not self.closed:
            with self.lock:
                watched = [] if self.is_cut else list(self.pairs)
            try:
                readable, _, _ = select.select([self.listener, self.wake_r] + watched, [], [])
            except (OSError, ValueError):
                continue  # a socket closed meanwhile: look again
            for s in readable:
                if s is self.wake_r:
                    os.read(self.wake_r, 64)
                elif s is self.listener:
                    client, _ = self.listener.accept()
                    with self.lock:
                        self.accepted += 1
                        cut = self.is_cut
                        if cut:
                            self.held.append(client)
                            self.held_total += 1
                    if not cut:
                        self._connect(client)
                else:
                    with self.lock:
                        if self.is_cut or s not in self.pairs:
                            continue
                        peer = self.pairs[s]
                    try:
                        data = s.recv(65536)
                        if data:
                            peer.sendall(data)
                            continue
                    except OSError:
                        pass
                    self._close_pair(s)

    def close(self):
        self.closed = True
        os.write(self.wake_w, b"x")
        self.thread.join(timeout=DEADLINE)
        with self.lock:
            everything = list(self.pairs) + self.held
        for s in everything + [self.listener]:
            s.close()


HARNESS = os.path.abspath(__file__)


def isolated(binds, network=False, silent_dns=False):
    """The argv prefix that runs a program in its own mount namespace (and, with `network`,
    its own network namespace with only the loopback up) with `binds` {file: over} bind-
    mounted, e.g. a resolv.conf and a hosts file; with `silent_dns`, a UDP socket on
    127.0.0.1:53 that receives every query and never answers (the program inherits it).
    `unshare` execs without forking, so the program keeps the pid it was started with."""
    # Not root: a user namespace of its own too, in which the test's user is root. In a
    # chroot (fresh-root, CI) "/" is no mount point and unshare cannot make it private
    # ("cannot change root filesystem propagation"): there the propagation is left as it
    # is, and _isolate refuses a bind mount that would propagate out of the namespace.
    propagation = "private" if _root_is_a_mount_point() else "unchanged"
    argv = ["/usr/bin/unshare", "--mount", "--propagation", propagation] + (["--net"] if network else []) + \
        ([] if os.geteuid() == 0 else ["--map-root-user"]) + ["--", "/usr/bin/python3", HARNESS, "isolate"]
    if network:
        argv.append("--loopback")
    if silent_dns:
        argv.append("--silent-dns")
    for source, target in binds.items():
        argv += ["--bind", f"{source}:{target}"]
    return argv + ["--"]


def _mounts():
    """/proc/self/mountinfo as (mount point, optional fields) pairs."""
    with open("/proc/self/mountinfo") as f:
        rows = [line.split() for line in f]
    return [(r[4], r[6:r.index("-")]) for r in rows]


def _root_is_a_mount_point():
    """False in a chroot whose root is a plain directory: mountinfo lists only the mounts
    reachable from the process's root, and none is at "/"."""
    return any(point == "/" for point, _ in _mounts())


def dns_queries_waiting(pid):
    """Bytes queued, unread, on UDP port 53 in the network namespace of `pid` (the silent
    DNS server's socket): > 0 once a query was sent to it."""
    try:
        with open(f"/proc/{pid}/net/udp") as f:
            rows = f.read().splitlines()[1:]
    except OSError:
        return 0
    total = 0
    for row in rows:
        fields = row.split()
        if fields[1].endswith(":0035"):
            total += int(fields[4].split(":")[1], 16)
    return total


def _isolate(args):
    """`harness.py isolate [--loopback] [--silent-dns] [--bind SRC:DST]... -- PROGRAM ARGS`:
    run by `isolated()` inside the new namespaces; sets them up, then execs PROGRAM."""
    import ctypes
    end = args.index("--")
    options, program = args[:end], args[end + 1:]
    keep = []
    i = 0
    while i < len(options):
        option = options[i]
        if option == "--loopback":
            SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                request = struct.pack("16sh", b"lo", 0).ljust(40, b"\0")
                flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, request)[:18])[1]
                fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP).ljust(40, b"\0"))
        elif option == "--silent-dns":
            dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            dns.bind(("127.0.0.1", 53))
            dns.set_inheritable(True)
            keep.append(dns)
        elif option == "--bind":
            i += 1
            source, target = options[i].split(":", 1)
            libc = ctypes.CDLL(None, use_errno=True)
            MS_BIND = 4096
            if libc.mount(source.encode(), target.encode(), None, MS_BIND, None) != 0:
                error = ctypes.get_errno()
                raise OSError(error, f"bind mount {source} over {target}: {os.strerror(error)}")
            # A shared mount would carry the bind to the parent namespace too (and keep it
            # there): undone at once (the unmount propagates as well), and refused.
            if any(point == target and any(f.startswith("shared:") for f in fields) for point, fields in _mounts()):
                libc.umount2(target.encode(), 0)
                raise SystemExit(f"harness.py isolate: {target} is on a shared mount that this namespace cannot "
                                 "make private (a chroot?): a bind over it would reach the parent namespace")
        else:
            raise SystemExit(f"harness.py isolate: unknown option {option}")
        i += 1
    os.execv(program[0], program)


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["isolate"]:
        _isolate(sys.argv[2:])
    else:
        raise SystemExit("usage: harness.py isolate [--loopback] [--silent-dns] [--bind SRC:DST]... -- PROGRAM ARGS")
