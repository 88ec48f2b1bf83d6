# SPDX-License-Identifier: Apache-2.0
# broker.sh: the MQTT broker of the systemd VM tiers, sourced in the guest by
# test-systemd (Tests/vm/systemd/run.sh) and test-deb-systemd (Tests/deb/systemd-guest.sh),
# which copy it to /etc/actiond-vmtest-broker.sh. The caller defines fail MESSAGE.
#
# The broker is Debian's mosquitto of the guest's /usr (this machine's /usr in both tiers,
# or the Debian root of test-deb-debian13, which includes it), listening on port 1883 of every address, so on the loopback, which
# actiond-mqtt.service as shipped may reach (IPAddressAllow=localhost). It runs as the
# transient unit vmtest-mosquitto (as root: the guest has no user mosquitto).

# vmtest_broker [USER PASSWORD]: starts the broker and returns once it accepts a publish.
# Without arguments it takes anonymous clients; with USER and PASSWORD only that user
# (a mosquitto password_file), and vmtest_pub / vmtest_sub log in as it.
vmtest_mqtt_login=
vmtest_broker() {
  printf 'listener 1883\nuser root\npersistence false\n' >/etc/vmtest-mosquitto.conf
  if [ $# -eq 2 ]; then
    install -m 0600 /dev/null /etc/vmtest-mosquitto.passwd
    mosquitto_passwd -b /etc/vmtest-mosquitto.passwd "$1" "$2" || fail "mosquitto_passwd"
    printf 'allow_anonymous false\npassword_file /etc/vmtest-mosquitto.passwd\n' >>/etc/vmtest-mosquitto.conf
    vmtest_mqtt_login="-u $1 -P $2"
  else
    printf 'allow_anonymous true\n' >>/etc/vmtest-mosquitto.conf
  fi
  systemd-run --quiet --unit=vmtest-mosquitto /usr/sbin/mosquitto -c /etc/vmtest-mosquitto.conf \
    || fail "cannot start mosquitto"
  _b=0
  until vmtest_pub -t vmtest/ping -m x 2>/dev/null; do
    _b=$((_b + 1))
    [ $_b -le 300 ] || fail "mosquitto does not listen: $(journalctl --no-pager -b -u vmtest-mosquitto -o cat | tail -5)"
    sleep 0.1
  done
}

# vmtest_pub ARGS / vmtest_sub ARGS: mosquitto_pub / mosquitto_sub on the broker, logged in.
# shellcheck disable=SC2086 # the login is two options and their values, none with spaces
vmtest_pub() { mosquitto_pub -h 127.0.0.1 $vmtest_mqtt_login "$@"; }
# shellcheck disable=SC2086
vmtest_sub() { mosquitto_sub -h 127.0.0.1 $vmtest_mqtt_login "$@"; }
# vmtest_sub_bg FILE ARGS: mosquitto_sub -v ARGS in the background, its lines ("topic
# payload") into FILE; its pid in vmtest_sub_pid (mosquitto_sub's own, for kill).
vmtest_sub_bg() {
  _f=$1; shift
  # shellcheck disable=SC2086
  mosquitto_sub -h 127.0.0.1 $vmtest_mqtt_login -v "$@" >"$_f" 2>&1 &
  vmtest_sub_pid=$!
}
