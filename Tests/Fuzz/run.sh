#!/usr/bin/env bash
# Builds tokenctl's libFuzzer targets (Tests/Fuzz) and runs each from its committed seeds.
#
#   Tests/Fuzz/run.sh [--runs N] [TARGET...]      (default: 1000000 runs, every target)
#
# Prints one line per target, `fuzz<TAB>TARGET<TAB>EXECUTIONS<TAB>CRASHES`, and appends the
# same lines to $FUZZ_SUMMARY when that is set. Exits non-zero after any crash, hang or
# memory blow-up, naming the reproducer; replay one with
#   FUZZ_TARGET=TARGET .build-fuzz/release/tokenctl-fuzz REPRODUCER
#
# What the fuzzer finds and its crash artifacts go under .build-fuzz/runs/, never into the
# committed seeds.
set -euo pipefail

repository=$(cd "$(dirname "$0")/../.." && pwd)
package="$repository/Tests/Fuzz"
scratch="$repository/.build-fuzz"
swift=${SWIFT:-swift}
runs=1000000
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --runs=*) runs=${1#--runs=}; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for directory in "$package"/Corpus/*/; do targets+=("$(basename "$directory")"); done
fi

# --sanitize=fuzzer tells SwiftPM that libFuzzer brings `main`; the -Xswiftc flag replaces
# it with fuzzer and address together, as SwiftPM keeps only one --sanitize. Dead
# stripping would drop the coverage counters' sections, leaving libFuzzer blind.
# gold warns once per ASan helper symbol that it cannot export it, which is harmless.
"$swift" build --package-path "$package" --scratch-path "$scratch" -c release \
  --sanitize=fuzzer -Xswiftc -sanitize=fuzzer,address --disable-dead-strip 2>&1 \
  | grep -v 'warning: Cannot export local symbol'
binary="$scratch/release/tokenctl-fuzz"

failed=0
for target in "${targets[@]}"; do
  [ -d "$package/Corpus/$target" ] || { echo "run.sh: no seeds for target '$target' in $package/Corpus" >&2; exit 2; }
  work="$scratch/runs/$target"
  rm -rf "$work/artifacts"
  mkdir -p "$work/corpus" "$work/artifacts"
  log="$work/log"
  started=$SECONDS
  status=0
  # A hang of 5 s or 2 GiB for one input is a defect: the parsers are linear and small.
  # The Swift runtime's own crash reporter would race libFuzzer's and stall: off.
  FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no \
    "$binary" -runs="$runs" -timeout=5 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$work/corpus" "$package/Corpus/$target" >"$log" 2>&1 || status=$?
  executions=$(sed -n 's/^Done \([0-9]*\) runs in .*/\1/p' "$log" | tail -1)
  [ -n "$executions" ] || executions=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
  crashes=$(find "$work/artifacts" -type f | wc -l)
  if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi
  line=$(printf 'fuzz\t%s\t%s\t%s' "$target" "${executions:-0}" "$crashes")
  echo "$line"
  if [ -n "${FUZZ_SUMMARY:-}" ]; then echo "$line" >>"$FUZZ_SUMMARY"; fi
  echo "  $target: $((SECONDS - started)) s, log $log" >&2
  if [ "$crashes" -ne 0 ]; then
    failed=1
    grep -E 'ERROR|SUMMARY|Fatal error|precondition|Test unit written' "$log" | head -20 >&2 || true
    for reproducer in "$work"/artifacts/*; do
      [ -e "$reproducer" ] && echo "  reproducer: FUZZ_TARGET=$target $binary $reproducer" >&2
    done
    # No reproducer (libFuzzer itself failed): its last words say why.
    if [ -z "$(ls -A "$work/artifacts")" ]; then tail -20 "$log" >&2; fi
  fi
done
exit $failed
