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
		if ! "$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$dir"; then
			echo "fuzz: FAIL: $target in $dir (failing input under $dir/testdata/fuzz/$target/)" >&2
			failed+=("$target in $dir")
		fi
	done
done

if [ "${#failed[@]}" -gt 0 ]; then
	echo "fuzz: ${#failed[@]} failed:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz: $ran targets ran clean for $FUZZTIME each"
