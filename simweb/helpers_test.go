package simweb

import (
	"testing"
)

// newWeb generates a web for a test, failing the test on error.
func newWeb(t testing.TB, cfg Config) *Web {
	t.Helper()
	w, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return w
}

// smallConfig is the ~100-host web the e2e tests use, scaled down.
func smallConfig(seed uint64) Config {
	c := DefaultConfig()
	c.Seed = seed
	c.Hosts = 60
	c.Pages = 3000
	c.Hazards = HazardsAll
	return c
}
