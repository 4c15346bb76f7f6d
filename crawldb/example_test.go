package crawldb_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/storage"
)

// Example writes a CrawlDB of three URLs as a job does (a part file sorted
// by URL in a new version directory, installed as current) and reads it
// back in URL order.
func Example() {
	dir, err := os.MkdirTemp("", "crawldb-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fsys := storage.NewLocal()
	db := path.Join(dir, "crawldb")

	// A part file holds its rows sorted by URL.
	version := crawldb.NewTempDir(db)
	f, err := fsys.Create(path.Join(version, "part-r-00000.parquet"))
	if err != nil {
		log.Fatal(err)
	}
	w := crawldb.NewParquetWriter(f)
	for _, d := range []crawldb.Datum{
		{URL: "http://a.example/", Status: crawldb.StatusDBFetched, Score: 1.5, ClusterID: -1},
		{URL: "http://a.example/copy", Status: crawldb.StatusDBDuplicate, ClusterID: -1},
		{URL: "http://b.example/", Status: crawldb.StatusDBUnfetched, Score: 1, ClusterID: -1},
	} {
		if err := w.Write(&d); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	if err := crawldb.Install(fsys, db, version, false); err != nil {
		log.Fatal(err)
	}

	r, err := crawldb.Open(fsys, db)
	if err != nil {
		log.Fatal(err)
	}
	for d, err := range r.Sorted(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.URL, d.Status)
	}
	// Output:
	// http://a.example/ db_fetched
	// http://a.example/copy db_duplicate
	// http://b.example/ db_unfetched
}
