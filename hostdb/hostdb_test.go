package hostdb

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// TestReader writes a HostDb of two parts and reads it back: its version,
// every row, one host, and the totals.
func TestReader(t *testing.T) {
	fsys := storage.NewLocal()
	dir := filepath.Join(t.TempDir(), "hostdb")
	if _, err := Open(fsys, dir); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "run updatehostdb") {
		t.Fatalf("a missing HostDb: %v", err)
	}
	t1 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := Host{Host: "a.test", Homepage: "https://a.test/", Fetched: 5, Unfetched: 2, Successes: 7, LastFetch: t1, LastSuccess: t1}
	b := Host{Host: "b.test", Unfetched: 3, Gone: 1, Failures: 4, FailureStreak: 4, RobotsFailures: 4, RobotsFailed: true,
		DNSFailures: 1, LastDNSFailure: t1, LastFetch: t1}
	c := Host{Host: "c.test", RobotsDenied: 2, Failures: 1, FailureStreak: 1, DNSFailures: 1,
		LastDNSFailure: t1.Add(-time.Hour), LastFetch: t1}
	cur := Current(dir)
	if err := parquetio.WriteFile(fsys, filepath.Join(cur, "part-r-00000.parquet"), []Host{a, c}); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WriteFile(fsys, filepath.Join(cur, "part-r-00001.parquet"), []Host{b}); err != nil {
		t.Fatal(err)
	}
	if err := WriteVersion(fsys, cur, t1); err != nil {
		t.Fatal(err)
	}
	r, err := Open(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version() != "20260301120000.000" || len(r.Parts()) != 2 {
		t.Errorf("version %q, parts %v", r.Version(), r.Parts())
	}
	var got []Host
	for h, err := range r.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h)
	}
	if len(got) != 3 || got[0] != a || got[1] != c || got[2] != b {
		t.Errorf("rows %+v", got)
	}
	if h, ok, err := r.Get(context.Background(), "b.test"); err != nil || !ok || h != b {
		t.Errorf("Get b.test: %+v %v %v", h, ok, err)
	}
	if _, ok, err := r.Get(context.Background(), "x.test"); err != nil || ok {
		t.Errorf("Get x.test: %v %v", ok, err)
	}
	if !b.DNSFailed() || c.DNSFailed() || a.DNSFailed() {
		t.Error("DNSFailed: b's last fetch failed on DNS, c's and a's did not")
	}
	st, err := r.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{Hosts: 3, URLs: 11, Status: []int64{5, 5, 1, 0, 0, 0, 0, 0}, Successes: 7, Failures: 5, RobotsDenied: 2,
		RobotsFailures: 4, DNSFailures: 2, Failing: 2, MaxStreak: 4, RobotsFailed: 1, DNSFailed: 1, Version: r.Version()}
	if st.Hosts != want.Hosts || st.URLs != want.URLs || st.Successes != want.Successes || st.Failures != want.Failures ||
		st.RobotsDenied != want.RobotsDenied || st.RobotsFailures != want.RobotsFailures || st.DNSFailures != want.DNSFailures ||
		st.Failing != want.Failing || st.MaxStreak != want.MaxStreak || st.RobotsFailed != want.RobotsFailed ||
		st.DNSFailed != want.DNSFailed || st.Version != want.Version || len(st.Status) != len(StatusColumns) {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	for i := range want.Status {
		if st.Status[i] != want.Status[i] {
			t.Errorf("%s: %d, want %d", StatusColumns[i], st.Status[i], want.Status[i])
		}
	}
}
