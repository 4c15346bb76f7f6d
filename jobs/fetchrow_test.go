package jobs

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/crawldb/crawldbtest"
	"github.com/trawl/trawl/segment"
)

// TestFetchRowRoundTrip checks that a crawl_fetch row kept as a fetchRow
// comes back whole, every field of segment.Fetch set, with its datum
// taken from the fetch list, and without a datum for a redirect target.
func TestFetchRowRoundTrip(t *testing.T) {
	var want segment.Fetch
	crawldbtest.Fill(t, rand.New(rand.NewPCG(1, 2)), reflect.ValueOf(&want).Elem())
	rows := []crawldb.Datum{{URL: "http://other.test/"}, want.Datum}
	r := rowOf(&want, 1)
	if got := r.fetch(rows); !reflect.DeepEqual(got, &want) {
		t.Errorf("fetch-list row 1:\n got %+v\nwant %+v", got, &want)
	}
	r = rowOf(&want, -1)
	noDatum := want
	noDatum.Datum = crawldb.Datum{}
	if got := r.fetch(rows); !reflect.DeepEqual(got, &noDatum) {
		t.Errorf("redirect target (no row):\n got %+v\nwant %+v", got, &noDatum)
	}
}
