package simweb_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/trawl/trawl/simweb"
)

// A crawl against the synthetic web: generate it, serve it with DNS, move
// the simulated clock with each round, then compare with the truth and
// check politeness in the access log.
func Example() {
	cfg := simweb.DefaultConfig()
	cfg.Seed, cfg.Hosts, cfg.Pages = 7, 100, 5000
	web, err := simweb.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	srv, err := web.Serve(context.Background(), simweb.ServeOptions{
		HTTPAddr: "127.0.0.1:0",
		DNSAddr:  "127.0.0.1:0",
		Latency:  1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()

	// Seeds, and the resolver to use for *.sim.test.
	fmt.Println(len(srv.Seeds()), "seeds; resolve via", srv.DNSAddr())

	// Round k happens at epoch + k days: `generate --now` and the server
	// agree on the simulated time.
	now := cfg.Epoch.AddDate(0, 0, 1)
	if err := srv.SetClock(now, 0); err != nil {
		log.Fatal(err)
	}
	// (Another process would POST http://<HTTPAddr>/_simweb/clock?t=<RFC 3339>.)
	resp, err := http.Post("http://"+srv.HTTPAddr()+"/_simweb/clock?t="+now.Format(time.RFC3339), "", nil)
	if err == nil {
		resp.Body.Close()
	}

	// ... crawl ...

	// Politeness: requests per host, concurrency, gaps.
	_ = srv.WaitIdle(context.Background())
	for host, st := range simweb.Stats(srv.AccessLog().Entries()) {
		if st.MaxConcurrent > 1 {
			fmt.Println("impolite to", host)
		}
	}
	// The truth, with URLs as served.
	f, err := os.CreateTemp("", "truth-*.parquet")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	if err := web.WriteTruthAddressed(f, srv.Addressing()); err != nil {
		log.Fatal(err)
	}
	f.Close()
}
