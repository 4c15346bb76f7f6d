package mapreduce

import (
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// shuffleRecord is one record given to a mapShuffle in the tests.
type shuffleRecord struct {
	part     int
	key, val string
}

// addAll adds recs to sh, failing the test if the buffer ever holds more
// than its budget with more than one record in it.
func addAll(t *testing.T, sh *mapShuffle, recs []shuffleRecord) {
	t.Helper()
	for i, r := range recs {
		if err := sh.add(r.part, r.key, []byte(r.val)); err != nil {
			t.Fatal(err)
		}
		if n := len(sh.buf.ents); n > 1 && sh.buf.size() > sh.buf.budget {
			t.Fatalf("record %d: buffer of %d records holds %d bytes, budget %d", i, n, sh.buf.size(), sh.buf.budget)
		}
	}
	if err := sh.finish(); err != nil {
		t.Fatal(err)
	}
}

// checkRuns merges every partition of sh's runs and checks that they hold
// exactly recs, in (partition, key, value) order.
func checkRuns(t *testing.T, sh *mapShuffle, recs []shuffleRecord) {
	t.Helper()
	want := slices.Clone(recs)
	slices.SortFunc(want, func(a, b shuffleRecord) int {
		if a.part != b.part {
			return a.part - b.part
		}
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return strings.Compare(a.val, b.val)
	})
	var got []shuffleRecord
	for p := range sh.parts {
		m, err := newMerger(sh.runs, p, 4<<10)
		if err != nil {
			t.Fatal(err)
		}
		for {
			part, k, v, err := m.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, shuffleRecord{part, string(k), string(v)})
		}
		m.close()
	}
	if len(got) != len(want) {
		t.Fatalf("merged %d records, added %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("record %d: got %q, want %q", i, got[i].key, want[i].key)
		}
	}
}

// urlRecords returns n records of URL keys and values of 0 to maxVal bytes.
func urlRecords(seed uint64, n, parts, maxVal int) []shuffleRecord {
	r := rand.New(rand.NewPCG(seed, 11))
	recs := make([]shuffleRecord, n)
	for i := range recs {
		key := fmt.Sprintf("http://h%03d.sim.test/%d", r.IntN(40), r.IntN(1e6))
		recs[i] = shuffleRecord{HashPartitioner(key, parts), key, strings.Repeat(string(rune('a'+i%26)), r.IntN(maxVal+1))}
	}
	return recs
}

// TestSortBufferGrowsWithData checks that a buffer with the default
// budget holds memory in proportion to what it is given, not to its
// budget: a few thousand small records take well under a MiB, and one
// spill.
func TestSortBufferGrowsWithData(t *testing.T) {
	for _, n := range []int{1, 100, 5000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			sh := &mapShuffle{buf: newSortBuffer(DefaultMemoryBudget / 2), parts: 2, dir: t.TempDir(), prefix: "m", c: &Counters{}}
			if sh.buf.size() != 0 {
				t.Fatalf("a new buffer holds %d bytes", sh.buf.size())
			}
			recs := urlRecords(uint64(n), n, 2, 60)
			var data int
			for _, r := range recs {
				data += len(r.key) + len(r.val)
			}
			for _, r := range recs {
				if err := sh.add(r.part, r.key, []byte(r.val)); err != nil {
					t.Fatal(err)
				}
			}
			// The arena at most doubles past the records' bytes (or its
			// first chunk), the index by half past the entries.
			limit := max(2*data, minChunk) + max(3*n/2, minEntries)*entrySize + minChunk
			if got := sh.buf.size(); got > limit {
				t.Errorf("%d records (%d bytes) hold %d bytes, want at most %d", n, data, got, limit)
			}
			if err := sh.finish(); err != nil {
				t.Fatal(err)
			}
			if len(sh.runs) != 1 {
				t.Errorf("%d runs, want 1", len(sh.runs))
			}
			checkRuns(t, sh, recs)
		})
	}
}

// TestSortBufferLargeFirstRecord gives a buffer a first record larger
// than its first chunk (and one larger than its largest chunk), then small
// ones: the large records get chunks of their own, which are dropped when
// the buffer is emptied.
func TestSortBufferLargeFirstRecord(t *testing.T) {
	const budget = 1 << 20
	sh := &mapShuffle{buf: newSortBuffer(budget), parts: 3, dir: t.TempDir(), prefix: "m", c: &Counters{}}
	recs := []shuffleRecord{{0, "http://big.sim.test/", strings.Repeat("x", 3*minChunk)}}
	recs = append(recs, urlRecords(1, 500, 3, 40)...)
	recs = append(recs, shuffleRecord{1, "http://huge.sim.test/", strings.Repeat("y", sh.buf.chunkSize+1)})
	recs = append(recs, urlRecords(2, 500, 3, 40)...)
	addAll(t, sh, recs)
	checkRuns(t, sh, recs)
	for _, c := range sh.buf.chunks {
		if cap(c) > sh.buf.chunkSize {
			t.Errorf("an emptied buffer keeps a chunk of %d bytes, above its chunk size %d", cap(c), sh.buf.chunkSize)
		}
	}
}

// TestSortBufferFillsItsShare fills buffers with same-size records until
// they refuse one: the buffer then holds at most its budget and most of
// it (the arena's last chunk is cut to what the budget leaves), and a
// record that fits the room left exactly is taken.
func TestSortBufferFillsItsShare(t *testing.T) {
	for _, budget := range []int{64 << 10, 1 << 20, 8 << 20} {
		t.Run(fmt.Sprint(budget), func(t *testing.T) {
			b := newSortBuffer(int64(budget))
			val := make([]byte, 50)
			n := 0
			for b.add(n%4, fmt.Sprintf("http://h.sim.test/%08d", n), val) {
				n++
			}
			if b.size() > budget {
				t.Fatalf("full buffer holds %d bytes, budget %d", b.size(), budget)
			}
			if b.size() < budget*9/10 {
				t.Errorf("buffer refused a record holding %d bytes of its %d budget", b.size(), budget)
			}
			t.Logf("full at %d of %d bytes, %d records, index %d/%d", b.size(), budget, n, len(b.ents), cap(b.ents))
			// A record that fills the last chunk exactly is taken, when
			// the index has room for it.
			if len(b.ents) < cap(b.ents) {
				c := b.chunks[b.cur]
				if room := cap(c) - len(c); room > 0 {
					key := "k"
					if !b.add(0, key, make([]byte, room-len(key))) {
						t.Errorf("a record of the %d bytes left in the last chunk was refused", room)
					}
				}
			}
		})
	}
}

// TestSortBufferSpillMergeWithGrowth runs many spills through a growing
// buffer, with record sizes that increase along the task (so chunks kept
// from earlier fills are too small and get replaced), and checks the
// merged runs and that the buffer keeps within its budget throughout.
func TestSortBufferSpillMergeWithGrowth(t *testing.T) {
	const budget = 256 << 10
	sh := &mapShuffle{buf: newSortBuffer(budget), parts: 4, dir: t.TempDir(), prefix: "m", c: &Counters{}}
	var recs []shuffleRecord
	for round := range 6 {
		recs = append(recs, urlRecords(uint64(round), 3000, 4, 16<<round)...)
	}
	addAll(t, sh, recs)
	if len(sh.runs) < 4 {
		t.Fatalf("%d runs: the test should spill several times", len(sh.runs))
	}
	checkRuns(t, sh, recs)
}

// TestMergeBufSize checks that a task's merge read buffers keep within
// its share of the budget, between their bounds.
func TestMergeBufSize(t *testing.T) {
	for _, c := range []struct {
		share      int64
		runs, most int
		want       int
	}{
		{128 << 20, 64, 64 << 10, 64 << 10},
		{1 << 20, 64, 64 << 10, 16 << 10},
		{1 << 20, 0, 256 << 10, 256 << 10},
		{64 << 10, 64, 64 << 10, 4 << 10},
	} {
		if got := mergeBufSize(c.share, c.runs, c.most); got != c.want {
			t.Errorf("mergeBufSize(%d, %d, %d) = %d, want %d", c.share, c.runs, c.most, got, c.want)
		}
	}
}

// TestSmallShuffleAllocatesLittle runs 100 records through a map shuffle
// with the default budget's share and merges them back with the largest
// read buffers: sort buffer, spill and merge together allocate far less
// than the share (a few times the records' bytes, not megabytes).
func TestSmallShuffleAllocatesLittle(t *testing.T) {
	recs := urlRecords(5, 100, 2, 40)
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	sh := &mapShuffle{buf: newSortBuffer(DefaultMemoryBudget / 2), parts: 2, dir: dir, prefix: "m", c: &Counters{}}
	for _, r := range recs {
		if err := sh.add(r.part, r.key, []byte(r.val)); err != nil {
			t.Fatal(err)
		}
	}
	if err := sh.finish(); err != nil {
		t.Fatal(err)
	}
	for p := range 2 {
		m, err := newMerger(sh.runs, p, 256<<10)
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, _, _, err := m.next(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
		}
		m.close()
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 128<<10 {
		t.Errorf("100 records through the shuffle allocated %d KiB", got>>10)
	} else {
		t.Logf("100 records through the shuffle allocated %d KiB", got>>10)
	}
}
