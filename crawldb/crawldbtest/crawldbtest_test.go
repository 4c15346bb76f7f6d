package crawldbtest_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
)

// TestDiffArrowFindsEachKind reads sample datums back with Arrow and checks
// that DiffArrow finds a change to a field of every kind it compares,
// naming the row and column.
func TestDiffArrowFindsEachKind(t *testing.T) {
	rows := crawldbtest.SampleDatums(8, 1)
	path := crawldbtest.RoundTrip(t, rows)
	tbl, err := crawldbtest.ReadArrow(path)
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	if err := crawldbtest.DiffArrow(rows, tbl); err != nil {
		t.Fatalf("unchanged rows: %v", err)
	}
	// A datum with every field set and a history (every fourth sample has
	// neither).
	r := slices.IndexFunc(rows, func(d crawldb.Datum) bool { return len(d.History) > 0 && d.Signature != nil })
	if r < 0 {
		t.Fatal("no sample datum has a history")
	}
	cases := []struct {
		change func(d *crawldb.Datum)
		want   string
	}{
		{func(d *crawldb.Datum) { d.URL += "x" }, ".url:"},
		{func(d *crawldb.Datum) { d.FixedInterval = !d.FixedInterval }, ".fixed_interval:"},
		{func(d *crawldb.Datum) { d.Status++ }, ".status:"},
		{func(d *crawldb.Datum) { d.FetchInterval++ }, ".fetch_interval:"},
		{func(d *crawldb.Datum) { d.Features.Bytes++ }, ".features.bytes:"},
		{func(d *crawldb.Datum) { d.Score += 1 }, ".score:"},
		{func(d *crawldb.Datum) { d.FetchTime = d.FetchTime.Add(time.Millisecond) }, ".fetch_time:"},
		{func(d *crawldb.Datum) { d.FetchTime = time.Time{} }, ".fetch_time:"},
		{func(d *crawldb.Datum) { d.Signature = append([]byte("x"), d.Signature...) }, ".signature:"},
		{func(d *crawldb.Datum) { d.History = d.History[1:] }, ".history:"},
		{func(d *crawldb.Datum) { d.History[0].Changed = !d.History[0].Changed }, ".history[0].changed:"},
		{func(d *crawldb.Datum) { d.Metadata = map[string]string{"k": "w"} }, ".metadata:"},
	}
	for _, c := range cases {
		changed := append([]crawldb.Datum(nil), rows...)
		d := changed[r]
		d.History = append([]crawldb.Observation(nil), d.History...)
		c.change(&d)
		changed[r] = d
		want := fmt.Sprintf("row %d %s", r, c.want)
		err := crawldbtest.DiffArrow(changed, tbl)
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("DiffArrow after a change to %s = %v; want an error starting %q", c.want, err, want)
		}
	}
}
