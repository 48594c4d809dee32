#!/usr/bin/env bash
# The main job: build, then load the bundled heart SDF model and run it on the default backend.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh > /dev/null
build/apps/mlpcore backends
build/apps/sdf_demo models/heart_sdf.safetensors
