#!/usr/bin/env bash
# Set up (only if needed: no .venv yet, or pyproject.toml changed) and start the ArmDyn
# window; arguments go to `armdyn`. A set-up checkout starts offline, without pip.
# Without a display (no $DISPLAY), the window opens on a virtual screen (Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --check || bash scripts/setup.sh
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    exec xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/armdyn "$@"
fi
exec .venv/bin/armdyn "$@"
