package mapreduce

import (
	"context"
	"path/filepath"
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

// A split's work is its rows times its input's RowWeight: a small input
// of heavy rows runs before a larger one of light rows.
func TestSplitWork(t *testing.T) {
	dir := t.TempDir()
	writeParts(t, filepath.Join(dir, "light"), makeDocs(300, 1), 1)
	writeParts(t, filepath.Join(dir, "heavy"), makeDocs(100, 2), 1)
	keep := func(t *Task, d Doc, emit Emit[Doc]) error { emit("", d); return nil }
	job := &Job[Doc, Doc]{
		Name:    "weigh",
		MapOnly: true,
		Inputs: []Input[Doc]{
			From(filepath.Join(dir, "light"), keep),
			From(filepath.Join(dir, "heavy"), keep, RowWeight(10)),
		},
		Outputs: []Output[Doc]{Write[Doc](filepath.Join(dir, "out"))},
	}
	ej, err := job.compile()
	if err != nil {
		t.Fatal(err)
	}
	splits, err := ej.listSplits(context.Background(), testRunner(t).resolver())
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 2 || splits[0].Rows != 300 || splits[0].Work != 300 || splits[1].Rows != 100 || splits[1].Work != 1000 {
		t.Fatalf("splits %+v", splits)
	}
	if got := largestFirst(splits); !slices.Equal(got, []int{1, 0}) {
		t.Errorf("order %v, want the heavy input's split first", got)
	}
}
