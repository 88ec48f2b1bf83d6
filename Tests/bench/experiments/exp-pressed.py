# SPDX-License-Identifier: Apache-2.0
"""Figures of Tests/bench/experiments/18-exp-pressed.sh out of a serial log: per series and
round, `pressed` (key-down kernel stamp -> subscriber read), `held` (deadline -> read) and
command start (deadline -> the command's first instruction, paired by ACTIOND_PRESS_TIME);
then each series' rounds pooled.

    python3 Tests/bench/experiments/exp-pressed.py OUT_DIR/serial.log
"""
import os, sys, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp_blocks import scenario, row, actiond_block
sc = scenario(sys.argv[1], "18-exp")
pooled = {}
for tag in sorted({m.group(1) for n in sc for m in [re.match(r"(.*-\d+)-events\.log$", n)] if m}):
    block = actiond_block(sc, tag)
    series = tag.rsplit("-", 1)[0]
    for what, v in block.items():
        print(row(f"{tag} {what}", v))
        pooled.setdefault((series, what), []).extend(v)
print()
for (series, what), v in sorted(pooled.items()):
    print(row(f"{series} {what} (pooled)", v))
