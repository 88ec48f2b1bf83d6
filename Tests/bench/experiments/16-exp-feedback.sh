# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 32 item 7), one boot: the threshold tick on a sysfs LED (06-feedback's set-up:
# the Caps Lock LED class device of an actiond-testdev --leds device, ticking on `held`, the hold
# running `benchtool record`) with the guest's actiond against the build before the change
# (actiond-base, given with BENCH_EXTRA_BINS; EXP_SERIES names more builds, actiond-NAME),
# interleaved rounds, with the C reactor doing the same deadline work (`--subscriber
# --noblock --spawn`) in each round. Per series: `held`, command start and the tick, all from the
# same deadlines; docs/benchmarks-notebook.md, hand-written section "The deadline turn's order
# and the threshold tick, 2026-12-03". Not part of `make bench`:
#   cp Tests/bench/experiments/16-exp-feedback.sh Tests/vm/bench/
#   BENCH_ONLY=16-exp-feedback BENCH_N=100 EXP_ROUNDS=3 EXP_SERIES=prep [EXP_LED=1] \
#     BENCH_EXTRA_BINS="/tmp/actiond-base /tmp/actiond-prep" \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-feedback.py OUT_DIR/serial.log
# timeout: 2600
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

# The LED's reader at SCHED_IDLE (as 06-feedback's): it must not run before the command it
# would otherwise be woken ahead of; EXP_BUSY_READER=1 leaves it at the normal policy.
[ "${EXP_BUSY_READER:-0}" = 1 ] || DEV_WRAP="$BENCHTOOL idle"
dev_start b --preset gpio-keys --name actiond-bench-led --keys KEY_F1 --leds LED_CAPSL
DEV_WRAP=
LED=$(grep -lx actiond-bench-led /sys/class/leds/input*::capslock/device/name)
LED=${LED%/device/name}
LED=${LED##*/}
[ -n "$LED" ] || fail "no Caps Lock LED class device for actiond-bench-led: $(ls /sys/class/leds)"
echo "trigger before: $(cat /sys/class/leds/$LED/trigger)" >led-trigger.log

fb_holds() {  # TAG BIN [WRAPPER...]
  _t=$1; _fb=$2; shift 2
  _fbt=$_t  # step clobbers _t
  bdev_start actiond-bench-button "$WORK/$_t-down.log"
  _from=$(wc -l <b.log)
  ACT_BUTTON_EXTRA=", feedback: [{ sysfs: \"$LED\", on: [\"held\"] }]" act_start "$_t" "$_fb" "$@"
  step "actiond $_t ($_fb $*), $BENCH_N holds, a sysfs LED ticking on held"
  hold_presses
  usleep 500000
  act_stop "$_fbt"
  tail -n +"$((_from + 1))" b.log |
    awk '$1 == "led" && $3 == "LED_CAPSL" && $4 == 1 { split($2, t, "."); printf "tick %d%06d\n", t[1], t[2] }' >"$_fbt-ticks.log"
  echo "trigger after $_fbt: $(cat /sys/class/leds/$LED/trigger)" >>led-trigger.log
  bdev_stop
}

# led_holds TAG BIN: the same with an EV_LED output on the button's own device (benchtool
# device --leds, which logs the LED's changes with uinput's stamps and reads them only
# between presses); its ticks in the sysfs series' format.
led_holds() {  # TAG BIN
  _t=$1; _fb=$2; shift 2
  _fbt=$_t
  bdev_start actiond-bench-button "$WORK/$_t-down.log" --leds
  ACT_BUTTON_EXTRA=', feedback: [{ led: "LED_CAPSL", on: ["held"] }]' act_start "$_t" "$_fb"
  step "actiond $_t ($_fb), $BENCH_N holds, an EV_LED ticking on held"
  hold_presses
  usleep 500000
  act_stop "$_fbt"
  bdev_stop
  awk '$1 == "led" && $3 == 1 && $4 != 0 { printf "tick %d\n", int($2 / 1000) }' "$_fbt-down.log" >"$_fbt-ticks.log"
}

for k in $(seq "${EXP_ROUNDS:-2}"); do
  reactor_holds r-subnb-$k --subscriber --noblock --spawn
  fb_holds i-base-$k actiond-base
  # More builds (actiond-NAME, given with BENCH_EXTRA_BINS): EXP_SERIES="NAME ...".
  for b in ${EXP_SERIES:-}; do fb_holds "i-$b-$k" "actiond-$b"; done
  fb_holds i-new-$k actiond
  if [ "${EXP_LED:-0}" = 1 ]; then
    led_holds i-led-base-$k actiond-base
    led_holds i-led-new-$k actiond
  fi
done
dev_stop b
