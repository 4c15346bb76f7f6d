#!/usr/bin/env bash
# Runs every Go fuzz target of the repository (func FuzzXxx(f *testing.F) in
# a _test.go file) for FUZZTIME each (default 10s), one after another: go
# test -fuzz takes one target of one package per run. Exits non-zero if any
# target fails, after naming every one that did; a failing input is kept by
# Go under the package's testdata/fuzz/<target>/.
#
#	FUZZTIME=5m scripts/fuzz.sh    (or: make fuzz FUZZTIME=5m)
set -euo pipefail
cd "$(dirname "$0")/.."

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-10s}

# The packages with fuzz targets, found in their test files so that only
# those packages are built to list them.
mapfile -t dirs < <(grep -rl --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git \
	-E '^func Fuzz[A-Za-z0-9_]*\(' . | xargs -r -n1 dirname | sort -u)
if [ "${#dirs[@]}" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi

failed=()
ran=0
for dir in "${dirs[@]}"; do
	if ! list=$("$GO" test -list '^Fuzz' "$dir"); then
		echo "$list" >&2
		echo "fuzz: FAIL: cannot list the fuzz targets of $dir" >&2
		failed+=("$dir (does not build)")
		continue
	fi
	for target in $(grep -E '^Fuzz' <<<"$list" || true); do
		ran=$((ran + 1))
		echo "fuzz: $dir $target for $FUZZTIME"
		corpus="$dir/testdata/fuzz/$target"
		before=$(ls "$corpus" 2>/dev/null | sort || true)
		out=$(mktemp)
		if "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$dir" 2>&1 | tee "$out"; [ "${PIPESTATUS[0]}" -eq 0 ]; then
			rm -f "$out"
			continue
		fi
		after=$(ls "$corpus" 2>/dev/null | sort || true)
		# Go 1.26's fuzz coordinator can report its own -fuzztime deadline
		# as a failure ("context deadline exceeded", golang/go#75804, fixed
		# in Go 1.27) without any failing input. A failure that wrote no new
		# input to the corpus and says only that is that race, not a bug.
		if [ "$before" = "$after" ] && grep -q 'context deadline exceeded' "$out" && ! grep -qE 'panic:|Failing input written' "$out"; then
			echo "fuzz: $target in $dir: Go's fuzz-deadline race (golang/go#75804), no failing input; not counted as a failure" >&2
			rm -f "$out"
			continue
		fi
		rm -f "$out"
		echo "fuzz: FAIL: $target in $dir (failing input under $corpus/)" >&2
		failed+=("$target in $dir")
	done
done

if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz: ${#failed[@]} failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $ran targets ran clean for $FUZZTIME each"
