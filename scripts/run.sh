#!/usr/bin/env bash
# Set up (if needed) and start the ArmDyn window; arguments go to `armdyn`.
# Without a display (no $DISPLAY), the window opens on a virtual screen (Xvfb).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    exec xvfb-run -a -s "-screen 0 1600x1000x24" .venv/bin/armdyn "$@"
fi
exec .venv/bin/armdyn "$@"
