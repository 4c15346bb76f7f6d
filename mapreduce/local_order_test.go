package mapreduce

import (
	"slices"
	"testing"
)

// TestLargestFirst: map tasks run largest (in rows times their input's
// RowWeight) first, ties in index order, so that the largest split does
// not run alone at the end.
func TestLargestFirst(t *testing.T) {
	splits := []split{{Work: 10}, {Work: 40}, {Work: 10}, {Work: 99}, {Work: 5}}
	if got, want := largestFirst(splits), []int{3, 1, 0, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got := largestFirst(nil); len(got) != 0 {
		t.Errorf("no splits: order %v", got)
	}
}

// RowWeight sets a row's weight; below 2 it leaves the default of 1.
func TestRowWeight(t *testing.T) {
	for n, want := range map[int]int64{-3: 1, 0: 1, 1: 1, 2: 2, 14: 14} {
		var o inputOpts
		RowWeight(n)(&o)
		if got := o.weight(); got != want {
			t.Errorf("RowWeight(%d): weight %d, want %d", n, got, want)
		}
	}
	if got := (inputOpts{}).weight(); got != 1 {
		t.Errorf("no RowWeight: weight %d, want 1", got)
	}
}
