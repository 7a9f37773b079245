#!/usr/bin/env bash
# Only for regenerating the validation plots in docs/validation (not needed by make run/test).
set -euo pipefail
dpkg-query -W -f='${Status}' python3-matplotlib 2>/dev/null | grep -q "install ok installed" && exit 0
export DEBIAN_FRONTEND=noninteractive
apt-get update -q && apt-get install -y -q --no-install-recommends python3-matplotlib
