package main

import "fmt"

// adjustedRand is the adjusted Rand index of two labelings of the same
// items (Hubert and Arabie, 1985): the Rand index corrected for chance,
//
//	ARI = (Σij C(nij,2) - E) / (½(Σi C(ai,2) + Σj C(bj,2)) - E),
//	E   = Σi C(ai,2) · Σj C(bj,2) / C(n,2),
//
// where nij counts the items labelled i in a and j in b, ai and bj are the
// row and column sums of that contingency table and C(k,2) = k(k-1)/2 is
// the number of pairs among k items. It is 1 for identical partitions (up
// to renaming labels) and about 0 for independent ones. Every label value
// is a cluster of its own, -1 included. When the denominator is 0 (both
// labelings put everything in one cluster, or everything in singletons)
// the partitions are equal and the index is 1, as in scikit-learn.
func adjustedRand(a, b []int32) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("adjusted Rand index: %d labels against %d", len(a), len(b))
	}
	n := int64(len(a))
	if n < 2 {
		return 1, nil
	}
	cells := make(map[[2]int32]int64)
	rows := make(map[int32]int64)
	cols := make(map[int32]int64)
	for i := range a {
		cells[[2]int32{a[i], b[i]}]++
		rows[a[i]]++
		cols[b[i]]++
	}
	pairs := func(k int64) int64 { return k * (k - 1) / 2 }
	var index, sumA, sumB int64
	for _, c := range cells {
		index += pairs(c)
	}
	for _, c := range rows {
		sumA += pairs(c)
	}
	for _, c := range cols {
		sumB += pairs(c)
	}
	expected := float64(sumA) * float64(sumB) / float64(pairs(n))
	maxIndex := (float64(sumA) + float64(sumB)) / 2
	if maxIndex == expected {
		return 1, nil
	}
	return (float64(index) - expected) / (maxIndex - expected), nil
}
