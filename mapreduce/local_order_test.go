package mapreduce

import (
	"slices"
	"testing"
)

// TestLargestFirst: map tasks run largest (in rows) first, ties in index
// order, so that the largest split does not run alone at the end.
func TestLargestFirst(t *testing.T) {
	splits := []split{{Rows: 10}, {Rows: 40}, {Rows: 10}, {Rows: 99}, {Rows: 5}}
	if got, want := largestFirst(splits), []int{3, 1, 0, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got := largestFirst(nil); len(got) != 0 {
		t.Errorf("no splits: order %v", got)
	}
}
