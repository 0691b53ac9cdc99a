#!/usr/bin/env bash
# Start a throw-away Label Studio server on 127.0.0.1 for the HumanOP tests (tests/human/).
#
# Label Studio pins many packages (Django, numpy<2.3 through opencv-python-headless 4.12, ...), so
# the SERVER lives in its own virtual environment ($LS_VENV, default /work/lsvenv), created here on
# first use; only `label-studio-sdk` (the client) is installed in the project's environment.
#
#   tests/human/start_label_studio.sh install            # create $LS_VENV with label-studio (once)
#   tests/human/start_label_studio.sh run PORT DATA_DIR  # run the server in the foreground
#
# The server gets one user (test@example.com) whose legacy API token is $LS_TOKEN. The pytest
# fixture in tests/human/conftest.py calls `run` itself (and `install` when the venv is missing).
set -euo pipefail
LS_VENV="${LS_VENV:-/work/lsvenv}"
LS_VERSION="${LS_VERSION:-1.23.2}"
LS_TOKEN="${LS_TOKEN:-dj-test-token-0123456789abcdef}"

install() {
  if [ ! -x "$LS_VENV/bin/label-studio" ]; then
    python3 -m venv "$LS_VENV"
    "$LS_VENV/bin/pip" install --quiet "label-studio==$LS_VERSION"
  fi
}

case "${1:-}" in
  install) install ;;
  run)
    PORT="${2:?port}"; DATA_DIR="${3:?data dir}"
    install
    mkdir -p "$DATA_DIR"
    export LABEL_STUDIO_BASE_DATA_DIR="$DATA_DIR" LABEL_STUDIO_DISABLE_SIGNUP_WITHOUT_LINK=true
    export LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN=true DJANGO_DB=sqlite SENTRY_DSN= FRONTEND_SENTRY_DSN=
    exec "$LS_VENV/bin/label-studio" start --no-browser --internal-host 127.0.0.1 --port "$PORT" \
      --data-dir "$DATA_DIR" --username test@example.com --password dj-test-password \
      --user-token "$LS_TOKEN" --agree-fix-sqlite
    ;;
  *) echo "usage: $0 install | run PORT DATA_DIR" >&2; exit 2 ;;
esac
