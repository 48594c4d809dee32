#!/usr/bin/env bash
# The main job: build what the demo needs, load the bundled heart SDF model, run it on the default
# backend and draw it; then build the rest, so that scripts/test.sh starts at once.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh mlpcore_cli sdf_demo
echo "==> Backends on this machine"
build/apps/mlpcore backends
echo "==> The heart SDF (models/heart_sdf.safetensors) on the default backend"
build/apps/sdf_demo models/heart_sdf.safetensors
echo "==> Building the rest (tests, renderer); interrupting here loses nothing"
cmake --build build --parallel "$(nproc)"
echo "==> Done. Run the tests with scripts/test.sh"
