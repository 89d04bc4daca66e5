#!/usr/bin/env bash
# The simulated-users model against Microsoft's published IOPS per mailbox, and the seed study's
# shape, at a realistic scale: model only (no I/O), on a simulated clock, release build. Prints
# the calibration table of docs/profiles.md.
#   USERS=2000 bench/users-model.sh
set -euo pipefail
cd "$(dirname "$0")/.."
USERS="${USERS:-2000}" cargo test --release --locked --lib users::calibration::tests::calibration_table \
  -- --ignored --nocapture 2>&1 | grep -v -E '^(running|test |$)|test result'
