#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-19, ASan + UBSan) in ./build-fuzz and runs both at once, each for
# SECONDS (default 60) on a scratch copy of its seed corpus (tests/fuzz/seeds/ stays untouched). Exits 1
# if either target found a crash, timeout, leak or out-of-memory; the inputs that did are kept in
# build-fuzz/artifacts/.
#   scripts/fuzz.sh [SECONDS]
# Environment: CXX (default clang++-19), FUZZ_FLAGS (extra libFuzzer flags, e.g. "-jobs=4 -workers=4").
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS]" >&2; exit 2; }
build="build-fuzz"

start=$(date +%s)
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DMLPCORE_FUZZ=ON -DCMAKE_CXX_COMPILER="${CXX:-clang++-19}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 2; }
cmake --build "$build" --parallel "$(nproc)" --target fuzz_model fuzz_arrays
echo "fuzz build: $(( $(date +%s) - start )) s"

# Both targets at once, one core each.
for target in model arrays; do
  work="$build/run/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$build/artifacts/$target"
  cp tests/fuzz/seeds/"$target"/* "$work/corpus/"
  touch "$work/started"
  echo "fuzz_$target: ${seconds} s, log in $work/fuzz.log"
  # -rss_limit_mb also caps a single allocation (malloc_limit_mb defaults to it).
  # shellcheck disable=SC2086
  ( rc=0
    "$build/tests/fuzz/fuzz_$target" "$work/corpus" -dict="tests/fuzz/$target.dict" -max_len=262144 \
      -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$target/" ${FUZZ_FLAGS:-} >"$work/fuzz.log" 2>&1 || rc=$?
    echo "$rc" >"$work/exit" ) &
done
wait

status=0
summary=()
for target in model arrays; do
  work="$build/run/$target"
  log="$work/fuzz.log"
  rc=$(cat "$work/exit")
  found=$(find "$build/artifacts/$target" -type f -newer "$work/started" \
            \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' -o -name 'oom-*' \) | sort)
  # The last status line: "#N DONE cov: C ft: F corp: K/S lim: L exec/s: E rss: R"
  line=$(grep -E '^#[0-9]+' "$log" | tail -n 1 || true)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  cov=$(sed -nE 's/.* cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+)\/([^ ]+) .*/\1 edges, \2 features, corpus \3 inputs (\4)/p' <<<"$line")
  result="ok"
  if [ "$rc" -ne 0 ] || [ -n "$found" ]; then
    status=1
    result="FAILED (exit $rc)"
    grep -E '^(==[0-9]+== ?ERROR|SUMMARY|fuzz_|terminate called|  what\(\)|.*runtime error:|.*Test unit written)' "$log" | head -n 8 >&2 || true
  fi
  summary+=("fuzz_$target: $result, ${runs:-?} runs, ${rate:-?} exec/s, ${cov:-coverage unknown}")
  for f in $found; do summary+=("  found: $f"); done
done

echo "---- fuzz summary (${seconds} s each) ----"
printf '%s\n' "${summary[@]}"
exit "$status"
