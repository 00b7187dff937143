#!/usr/bin/env bash
# Set up ArmDyn on a fresh Debian 12 machine: a virtual environment in .venv with the
# application (and, with --test, the test tools), plus the Debian packages that Qt's
# xcb platform and the headless GUI tests need (Xvfb and a few xcb libraries).
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
if [[ "${1:-}" == "--test" ]]; then extras="[test]"; fi

debs=(xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-xinerama0 libxcb-cursor0 libxkbcommon-x11-0 libgl1 libegl1)
missing=()
for p in "${debs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
    echo "setup: installing Debian packages: ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}"
echo "setup: done (.venv)"
