#!/usr/bin/env bash
# Set up ArmDyn on a fresh Debian 12 machine: a virtual environment in .venv with the
# application (and, with --test, the test tools), plus the Debian packages that Qt's
# xcb platform and the headless GUI tests need (Xvfb and a few xcb libraries).
# pip runs only when .venv was not yet set up for this pyproject.toml (and these
# extras): a set-up checkout starts and tests offline. `setup.sh --check` only says
# (exit status) whether .venv is up to date.
#
# Python: 3.11 or newer, `python3` or the interpreter in $PYTHON. Debian packages
# already installed are skipped; apt waits (up to $APT_WAIT s, 300) for another
# package manager (unattended-upgrades, cloud-init) to release its lock. Without apt
# the packages are listed for you to install and the rest of the setup goes on.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
check=0
case "${1:-}" in
    --test) extras="[test]" ;;
    --check) check=1 ;;  # exit 0 if .venv is set up for this pyproject.toml, else 1
esac

# What the last setup installed: the hash of pyproject.toml and the extras, in .venv.
STAMP=.venv/armdyn-setup.stamp
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
installed_for() {  # was .venv set up for this pyproject.toml with extras $1 (or more)?
    [[ -x .venv/bin/python && -f "$STAMP" ]] || return 1
    local hash have
    read -r hash have <"$STAMP" || return 1
    [[ "$hash" == "$want" && ( -z "$1" || "$have" == "$1" ) ]]
}
if ((check)); then
    installed_for "" && [[ -x .venv/bin/armdyn ]]
    exit
fi

PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null; then
    echo "setup: no $PY; install Python 3.11 or newer, or set PYTHON=/path/to/python3.11" >&2
    exit 1
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "setup: ArmDyn needs Python 3.11 or newer, $PY is $("$PY" -V 2>&1);" \
         "set PYTHON=/path/to/python3.11" >&2
    exit 1
fi

debs=(xvfb xauth libxcb-icccm4 libxcb-keysyms1 libxcb-xinerama0 libxcb-cursor0 libxkbcommon-x11-0 libgl1 libegl1)
if [[ ! -x .venv/bin/python ]] && ! "$PY" -c 'import ensurepip' 2>/dev/null; then
    debs+=(python3-venv)  # Debian's python3 makes virtual environments only with it
fi

installed() {  # is Debian package $1 installed?
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q " ok installed"
}

APT_WAIT=${APT_WAIT:-300}
apt_update() {  # apt-get update, retried while another process holds the lists lock
    local waited=0 out
    until out=$($SUDO apt-get -o DPkg::Lock::Timeout="$APT_WAIT" update -qq 2>&1); do
        if ! grep -q "Could not get lock" <<<"$out" || ((waited >= APT_WAIT)); then
            echo "$out" >&2
            return 1
        fi
        ((waited == 0)) && echo "setup: waiting for another package manager to finish"
        sleep 5
        ((waited += 5))
    done
}

if command -v apt-get >/dev/null && command -v dpkg-query >/dev/null; then
    missing=()
    for p in "${debs[@]}"; do
        installed "$p" || missing+=("$p")
    done
    if ((${#missing[@]})); then
        SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
        echo "setup: installing Debian packages: ${missing[*]}"
        apt_update
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get -o DPkg::Lock::Timeout="$APT_WAIT" \
            install -y -qq "${missing[@]}" >/dev/null
    fi
else
    echo "setup: no apt here; install with your package manager what these Debian packages" \
         "provide (the window needs the Qt xcb libraries, the GUI tests Xvfb): ${debs[*]}"
fi

[[ -x .venv/bin/python ]] || "$PY" -m venv .venv
if installed_for "$extras"; then
    echo "setup: .venv is up to date with pyproject.toml (nothing to install)"
else
    .venv/bin/python -m pip install -q --disable-pip-version-check -e ".${extras}"
    echo "$want ${extras}" >"$STAMP"
fi
# An editable install leaves our own modules uncompiled; compiled now, a start does not
# compile them again each time where bytecode is not written (PYTHONDONTWRITEBYTECODE).
.venv/bin/python -m compileall -q core gui
# numba compiles the dynamics kernels on first use, about 1.5 minutes of one core's time
# (94 s of CPU measured for every kernel on this project's 2-core machine):
# done here, once (later they load from the cache in ~/.cache/armdyn in a second), so
# that the first start of the window is as quick as any and a first run need not wait.
echo "setup: loading the dynamics kernels (compiled the first time: 1 to 2 minutes)"
.venv/bin/python -c "import armdyn.core as core; core.warm_up()" \
    || echo "setup: the kernels could not be compiled now; the window compiles them on first use"
echo "setup: done; the command is .venv/bin/armdyn (source .venv/bin/activate to have" \
     "armdyn on PATH)"
