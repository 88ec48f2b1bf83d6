#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The guest half of Tests/deb/systemd.sh, run by systemd as a oneshot once the system is
# up; every line goes to the serial console. @STAGE@ is the host directory with the
# packages and actiond-testdev, seen through 9p under /host.
stage=/host@STAGE@
# Each line says when (seconds since the guest booted), to see where a slow run spends it.
say() { echo "SYSTEMD: [$(cut -d" " -f1 /proc/uptime) s] $*"; }
fail() {
  echo "SYSTEMD-FAIL: $*"
  systemctl --no-pager status actiond.socket actiond.service actiond-mqtt.service systemd-udevd.service 2>&1 | sed 's/^/  /'
  journalctl --no-pager -b -u actiond.service -u actiond.socket -u actiond-mqtt.service 2>&1 | tail -30 | sed 's/^/  /'
  systemctl poweroff --force --force
}
export PATH=/usr/sbin:/usr/bin SYSTEMD_PAGER=cat DEBIAN_FRONTEND=noninteractive
apt() { apt-get -q -y -o Dpkg::Use-Pty=0 "$@" >/tmp/apt.log 2>&1 || { sed 's/^/  apt: /' /tmp/apt.log; fail "apt-get $*"; }; }
# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 0.1 s (systemd state, not timing).
wait_until() {
  _s=$1 _what=$2; shift 2; _i=0
  until "$@" >/dev/null 2>&1; do
    _i=$((_i + 1)); [ $_i -le $((_s * 10)) ] || fail "not within ${_s} s: $_what"
    sleep 0.1
  done
}
status_has() { actionctl status 2>/dev/null | grep -q "$1"; }
pv=$(cat $stage/previous-version) nv=$(cat $stage/next-version) nbv=$(cat $stage/next-binary-version)
say "guest: $(. /etc/os-release && echo "$PRETTY_NAME"), kernel $(uname -r), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'), dpkg $(dpkg-query -W -f='${Version}' dpkg), libc $(dpkg-query -W -f='${Version}' libc6 2>/dev/null || dpkg-query -W -f='${Version}' 'libc6:*')"
systemctl is-active --quiet systemd-udevd.service || fail "systemd-udevd is not running"

# 1. A button is already plugged in (the local rule marks it; nothing tags it yet) when
#    the previous build is installed: the postinst creates the user, enables and starts
#    the socket, leaves the service disabled, and re-applies the udev rules, so the
#    button is tagged and udev starts the service (SYSTEMD_WANTS) right away.
mkfifo /tmp/dev.fifo
$stage/actiond-testdev create --name actiond-vmtest-button </tmp/dev.fifo >/tmp/dev.log 2>&1 &
exec 3>/tmp/dev.fifo
wait_until 30 "the uinput device exists" grep -q '^created ' /tmp/dev.log
node=$(sed -n 's/^created \([^ ]*\) .*/\1/p' /tmp/dev.log | tail -1)
[ -c "$node" ] || fail "no device node in: $(cat /tmp/dev.log)"
if udevadm info -q property -n "$node" | grep -q '^TAGS=.*:actiond:'; then fail "$node is tagged actiond before the package is installed"; fi
t=$(date +%s)
apt install "$stage/actiond-previous.deb"
say "apt-get install ./actiond_${pv}: $(grep -c . /tmp/apt.log) lines, $(($(date +%s) - t)) s"
[ "$(dpkg-query -W -f='${Status} ${Version}' actiond)" = "install ok installed $pv" ] || fail "dpkg: $(dpkg-query -W actiond 2>&1)"
id actiond >/dev/null 2>&1 || fail "the postinst did not create the user actiond"
say "user: $(id actiond)"
[ "$(systemctl is-enabled actiond.socket)" = enabled ] || fail "actiond.socket is not enabled"
systemctl is-active --quiet actiond.socket || fail "actiond.socket is not active"
[ "$(systemctl is-enabled actiond.service)" = disabled ] || fail "actiond.service is $(systemctl is-enabled actiond.service), not disabled"
say "socket enabled and listening ($(stat -c '%U:%G %a' /run/actiond/actiond.sock)), service disabled"
wait_until 60 "the postinst's udev trigger tags $node and systemd starts actiond.service" systemctl is-active --quiet actiond.service
say "button $node present at install (tags $(udevadm info -q property -n "$node" | sed -n 's/^TAGS=//p')): the postinst's trigger started actiond.service"

# 2. Hotplug: with the service stopped, a tagged button appearing starts it.
systemctl stop actiond.service
systemctl is-active --quiet actiond.socket || fail "stopping the service stopped the socket"
echo "destroy" >&3
echo "recreate" >&3
echo "echo recreated" >&3
wait_until 30 "the device is recreated" grep -q '^recreated$' /tmp/dev.log
node=$(sed -n 's/^created \([^ ]*\) .*/\1/p' /tmp/dev.log | tail -1)
wait_until 60 "udev starts actiond.service for the new $node" systemctl is-active --quiet actiond.service
say "service stopped, button re-plugged as $node: udev started actiond.service"

# 3. A hold on the button performs the default control, the Work Timer.
wait_until 60 "actiond binds $node" status_has "$node"
status_has 'Work Timer.*Stopped' || fail "unexpected status: $(actionctl status 2>&1)"
echo "press KEY_PROG1 1500ms" >&3
echo "echo pressed" >&3
wait_until 60 "the hold is sent" grep -q '^pressed$' /tmp/dev.log
wait_until 30 "the hold starts the Work Timer" status_has 'Work Timer.*Running'
actionctl status | sed 's/^/SYSTEMD: status: /'
journalctl --no-pager -b -u actiond.service -o cat | grep -q 'Running' || fail "no Running announcement in the journal"
say "hold on KEY_PROG1: $(journalctl --no-pager -b -u actiond.service -o cat | grep 'Running' | tail -1)"

# 4. Without a configuration neither unit starts (ConditionPathExists=).
systemctl stop actiond.socket actiond.service
mv /etc/actiond/actiond.json /tmp/actiond.json
systemctl start actiond.socket actiond.service || fail "systemctl start without a configuration failed"
[ "$(systemctl is-active actiond.socket)" != active ] && [ "$(systemctl is-active actiond.service)" != active ] \
  || fail "a unit started without /etc/actiond/actiond.json"
say "without /etc/actiond/actiond.json: socket $(systemctl show -P ConditionResult actiond.socket | sed 's/no/condition failed/'), service $(systemctl show -P ConditionResult actiond.service | sed 's/no/condition failed/')"
mv /tmp/actiond.json /etc/actiond/actiond.json
systemctl start actiond.socket
status_has 'Work Timer.*Running' || fail "after the restart the Work Timer is not Running (state lost?): $(actionctl status 2>&1)"

# 5. actiond-mqtt beside it. Installed, not configured: not enabled, not started; started
#    without its password file it fails once (the credential) and is not restarted
#    (docs/operations.md). Then configured as docs/home-assistant.md says (the password
#    as the credential mqtt-password, /etc/actiond/mqtt.json5) against a broker that
#    takes only that user, and enabled: it connects (online, discovery), a hold on the
#    key is its event; apt-get remove stops it and keeps its files, purge removes them and
#    nothing of actiond's.
. /etc/actiond-vmtest-broker.sh
apt install "$stage/actiond-mqtt-previous.deb"
[ "$(dpkg-query -W -f='${Status} ${Version}' actiond-mqtt)" = "install ok installed $pv" ] || fail "dpkg: $(dpkg-query -W actiond-mqtt 2>&1)"
[ "$(systemctl is-enabled actiond-mqtt.service)" = disabled ] || fail "actiond-mqtt.service is $(systemctl is-enabled actiond-mqtt.service) after install, not disabled"
[ "$(systemctl is-active actiond-mqtt.service)" = inactive ] || fail "actiond-mqtt.service is $(systemctl is-active actiond-mqtt.service) after install, not inactive"
say "apt-get install ./actiond-mqtt_${pv}: actiond-mqtt.service disabled, inactive"
[ ! -e /etc/actiond/mqtt-password ] || fail "/etc/actiond/mqtt-password exists before the operator wrote it"
# systemd logs to the journal here, as it does by default (this VM's command line has
# it log to the console), so the journal shows what an operator would see.
systemctl log-target journal-or-kmsg
systemctl start actiond-mqtt.service 2>/dev/null || true
# settled: failed, or waiting to be restarted (the state a restart loop passes through)
mqtt_state() { echo "$(systemctl show -P ActiveState actiond-mqtt.service)/$(systemctl show -P SubState actiond-mqtt.service)"; }
wait_until 30 "actiond-mqtt.service without a password file fails" sh -c 'case $(systemctl show -P ActiveState actiond-mqtt.service)/$(systemctl show -P SubState actiond-mqtt.service) in failed/* | */auto-restart) exit 0;; esac; exit 1'
[ "$(mqtt_state)" = failed/failed ] && [ "$(systemctl show -P NRestarts actiond-mqtt.service)" = 0 ] \
  && [ "$(systemctl show -P ExecMainStatus actiond-mqtt.service)" = 243 ] \
  || fail "actiond-mqtt.service without /etc/actiond/mqtt-password is $(mqtt_state) (restarts: $(systemctl show -P NRestarts actiond-mqtt.service)), not failed for good"
why=$(journalctl --no-pager -b -u actiond-mqtt.service -o cat | grep -m1 'Failed to set up credentials') \
  || fail "no 'Failed to set up credentials' in the journal: $(journalctl --no-pager -b -u actiond-mqtt.service -o cat | tail -5)"
say "started without /etc/actiond/mqtt-password: $(mqtt_state), $(systemctl show -P Result actiond-mqtt.service) $(systemctl show -P ExecMainStatus actiond-mqtt.service), not restarted; journal: $why"
systemctl log-target console
systemctl reset-failed actiond-mqtt.service
vmtest_broker pi vmtest-password
printf '%s\n' vmtest-password | install -m 0600 /dev/stdin /etc/actiond/mqtt-password
printf '{ broker: { host: "127.0.0.1", username: "pi" }, homeAssistant: { nodeId: "vm" } }\n' >/etc/actiond/mqtt.json5
actiond-mqtt --check-config >/tmp/mqtt-check.log 2>&1 || fail "actiond-mqtt --check-config: $(cat /tmp/mqtt-check.log)"
systemctl enable --now actiond-mqtt.service >/dev/null 2>&1 || fail "systemctl enable --now actiond-mqtt.service"
vmtest_sub_bg /tmp/mqtt-retained.log -t homeassistant/device/vm/config -t actiond/vm/bridge -t actiond/vm/daemon
wait_until 60 "a subscriber sees actiond/vm/bridge online, actiond/vm/daemon online and the discovery" \
  sh -c 'grep -qx "actiond/vm/bridge online" /tmp/mqtt-retained.log && grep -qx "actiond/vm/daemon online" /tmp/mqtt-retained.log && grep -q "^homeassistant/device/vm/config {.*\"action_long_press\"" /tmp/mqtt-retained.log'
kill $vmtest_sub_pid
say "actiond-mqtt.service enabled and running as $(stat -c %U /proc/$(systemctl show -P MainPID actiond-mqtt.service)): bridge online, daemon online, discovery ($(grep '^homeassistant/' /tmp/mqtt-retained.log | tail -1 | wc -c) bytes)"
vmtest_sub_bg /tmp/mqtt-events.log -t actiond/vm/button/action/event -t actiond/vm/control/org_actiond_work-timer/state -t vmtest/sync
synced() { vmtest_pub -t vmtest/sync -m synced && grep -qx 'vmtest/sync synced' /tmp/mqtt-events.log; }
wait_until 30 "the event subscriber is subscribed" synced
wait_until 60 "actiond binds $node" status_has "$node"
echo "press KEY_PROG1 1500ms" >&3
echo "echo pressed again" >&3
wait_until 60 "the hold is sent" grep -q '^pressed again$' /tmp/dev.log
wait_until 30 "the hold's long_press and long_release over MQTT" \
  sh -c 'grep -q "^actiond/vm/button/action/event {.*\"event_type\":\"long_press\"" /tmp/mqtt-events.log && grep -q "^actiond/vm/button/action/event {.*\"event_type\":\"long_release\"" /tmp/mqtt-events.log'
wait_until 30 "the hold's Work Timer OFF over MQTT" grep -qx 'actiond/vm/control/org_actiond_work-timer/state OFF' /tmp/mqtt-events.log
say "hold on KEY_PROG1: $(grep -c '^actiond/vm/button/action/event ' /tmp/mqtt-events.log) events over MQTT ($(sed -n 's|^actiond/vm/button/action/event .*"event_type":"\([a-z_]*\)".*|\1|p' /tmp/mqtt-events.log | tr '\n' ' ')), Work Timer OFF"
# Back to Running (the upgrade below checks the state survives), by the bridge's switch.
vmtest_pub -q 1 -t actiond/vm/control/org_actiond_work-timer/set -m ON || fail "mosquitto_pub"
wait_until 30 "the switch command ON over MQTT makes the Work Timer Running" status_has 'Work Timer.*Running'
kill $vmtest_sub_pid
say "switch ON over MQTT: $(actionctl status 2>&1 | grep 'Work Timer')"
[ "$(systemctl show -P NRestarts actiond-mqtt.service)" = 0 ] || fail "actiond-mqtt.service was restarted by systemd"
apt remove actiond-mqtt
dpkg-query -W -f='${Status}' actiond-mqtt 2>/dev/null | grep -q ' installed$' && fail "actiond-mqtt is still installed after remove"
[ "$(systemctl is-active actiond-mqtt.service)" != active ] || fail "actiond-mqtt.service still runs after apt-get remove actiond-mqtt"
[ ! -e /usr/sbin/actiond-mqtt ] || fail "/usr/sbin/actiond-mqtt is still there after remove"
[ -f /etc/actiond/mqtt.json5 ] && grep -qx vmtest-password /etc/actiond/mqtt-password \
  || fail "apt-get remove actiond-mqtt removed /etc/actiond/mqtt.json5 or mqtt-password"
bridge=$(vmtest_sub -t actiond/vm/bridge -C 1 -W 10 2>&1)
[ "$bridge" = offline ] || fail "after remove the bridge's retained state is '$bridge', not offline (not stopped cleanly?)"
systemctl is-active --quiet actiond.service || fail "apt-get remove actiond-mqtt stopped actiond.service"
say "apt-get remove actiond-mqtt: stopped (bridge offline), mqtt.json5 and mqtt-password kept, actiond running"
apt purge actiond-mqtt
dpkg-query -W -f='${Status}' actiond-mqtt 2>/dev/null | grep -q 'config-files\|installed' && fail "actiond-mqtt still known to dpkg after purge"
for f in /etc/actiond/mqtt.json5 /etc/actiond/mqtt-password; do [ ! -e $f ] || fail "$f is still there after purge"; done
if ls /etc/systemd/system/*.wants/actiond-mqtt.service 2>/dev/null; then fail "actiond-mqtt's enablement symlink left after purge"; fi
[ ! -L /etc/systemd/system/actiond-mqtt.service ] || fail "actiond-mqtt.service is still masked after purge: $(ls -l /etc/systemd/system/actiond-mqtt.service)"
[ -f /etc/actiond/actiond.json ] && [ -d /etc/actiond/controls.d ] || fail "apt-get purge actiond-mqtt removed actiond's files: $(find /etc/actiond)"
status_has 'Work Timer.*Running' || fail "actiond after purging actiond-mqtt: $(actionctl status 2>&1)"
say "apt-get purge actiond-mqtt: mqtt.json5, mqtt-password and the enablement gone; kept in /etc/actiond: $(cd /etc/actiond && find . -type f | sed 's|^./||' | tr '\n' ' ')"
systemctl stop vmtest-mosquitto.service

# 6. Upgrade to the next build: the edited conffile and the state stay, the running
#    service is restarted on the new binary, the socket keeps listening.
echo '// edited by the operator' >>/etc/actiond/actiond.json
pid=$(systemctl show -P MainPID actiond.service)
sock_since=$(systemctl show -P ActiveEnterTimestampMonotonic actiond.socket)
t=$(date +%s)
apt install "$stage/actiond-next.deb"
say "apt-get install ./actiond_${nv} (upgrade): $(($(date +%s) - t)) s"
[ "$(dpkg-query -W -f='${Version}' actiond)" = "$nv" ] || fail "not upgraded: $(dpkg-query -W actiond)"
grep -q 'edited by the operator' /etc/actiond/actiond.json || fail "the upgrade replaced the edited /etc/actiond/actiond.json"
[ ! -e /etc/actiond/actiond.json.dpkg-new ] && [ ! -e /etc/actiond/actiond.json.dpkg-dist ] || fail "dpkg left a .dpkg-new/.dpkg-dist"
systemctl is-active --quiet actiond.service || fail "actiond.service is not running after the upgrade"
npid=$(systemctl show -P MainPID actiond.service)
[ "$npid" != "$pid" ] || fail "the upgrade did not restart actiond.service (pid $pid)"
[ "$(systemctl show -P ActiveEnterTimestampMonotonic actiond.socket)" = "$sock_since" ] || fail "the upgrade restarted the socket"
/usr/sbin/actiond --version | grep -qF "$nbv" || fail "/usr/sbin/actiond is not $nbv: $(/usr/sbin/actiond --version)"
# The restarted service runs the file the upgrade unpacked (a process still on the
# replaced binary would show it "(deleted)"), every file is the next package's as its
# md5sums say (only the edited conffile differs), and its changelog is the next one's.
exe=$(readlink /proc/$npid/exe)
[ "$exe" = /usr/sbin/actiond ] || fail "actiond.service runs '$exe' after the upgrade, not the unpacked /usr/sbin/actiond"
dpkg --verify actiond >/tmp/verify.log 2>&1
if grep -v ' c /etc/actiond/actiond.json$' /tmp/verify.log | grep -q .; then fail "dpkg --verify actiond after the upgrade: $(tr "\n" ";" </tmp/verify.log)"; fi
zcat /usr/share/doc/actiond/changelog*.gz | head -1 | grep -qF "($nv)" || fail "the changelog is not $nv's: $(zcat /usr/share/doc/actiond/changelog*.gz | head -1)"
status_has 'Work Timer.*Running' || fail "the state was lost in the upgrade: $(actionctl status 2>&1)"
say "upgrade $pv -> $nv: edited conffile kept, service restarted (pid $pid -> $npid) on the unpacked binary ($(/usr/sbin/actiond --version)), files verified, socket kept, Work Timer still Running"

# 7. Remove: units stopped, configuration (and state, user) kept; the operator's own
#    drop-in too.
cp /usr/share/doc/actiond/examples/controls.d/mute.json /etc/actiond/controls.d/mine.json
apt remove actiond
[ "$(dpkg-query -W -f='${Status}' actiond)" = "deinstall ok config-files" ] || fail "after remove: $(dpkg-query -W -f='${Status}' actiond)"
for u in actiond.socket actiond.service; do
  [ "$(systemctl is-active $u)" != active ] || fail "$u still runs after apt-get remove"
done
[ ! -e /usr/sbin/actiond ] || fail "/usr/sbin/actiond is still there"
grep -q 'edited by the operator' /etc/actiond/actiond.json || fail "apt-get remove removed the configuration"
[ -f /etc/actiond/controls.d/mine.json ] || fail "apt-get remove removed the operator's /etc/actiond/controls.d/mine.json"
[ -d /var/lib/actiond ] && id actiond >/dev/null 2>&1 || fail "apt-get remove removed the state or the user"
say "apt-get remove: units stopped, $(cd /etc/actiond && find . -type f | sed 's|^./||' | tr '\n' ' ')kept in /etc/actiond, state and user kept"

# 8. Purge: configuration, state and runtime directory gone; the system user stays.
apt purge actiond
dpkg-query -W -f='${Status}' actiond 2>/dev/null | grep -q 'config-files\|installed' && fail "still known to dpkg after purge"
for p in /etc/actiond /var/lib/actiond /run/actiond; do [ ! -e $p ] || fail "$p is still there after purge"; done
getent passwd actiond >/dev/null && getent group actiond >/dev/null || fail "purge removed the system user or group actiond"
if ls /etc/systemd/system/*.wants/actiond.* 2>/dev/null; then fail "enablement symlinks left after purge"; fi
say "apt-get purge: /etc/actiond, /var/lib/actiond, /run/actiond removed; the system user actiond kept"
exec 3>&-
echo "SYSTEMD-PASS"
systemctl poweroff --force --force
