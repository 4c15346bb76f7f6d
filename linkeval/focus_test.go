package linkeval

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/simweb"
)

// TestEvalFocus runs every strategy on a small topical web: the focused
// strategies keep a harvest rate and a recall far above breadth-first's,
// and IPageRank stays close to best-first; the JSON has the documented
// shape and the plot is written.
func TestEvalFocus(t *testing.T) {
	rep, err := EvalFocus(context.Background(), FocusConfig{Web: simweb.Config{Hosts: 200, Pages: 20000}, Checkpoints: []int{200, 500, 1000}})
	if err != nil {
		t.Fatal(err)
	}
	at := map[string]Point{}
	for _, s := range rep.Strategies {
		if len(s.At) != 3 || s.At[2].Pages != 1000 || len(s.Curve) == 0 {
			t.Fatalf("%s: %+v", s.Name, s.At)
		}
		at[s.Name] = s.At[2]
		t.Logf("%-17s %+v", s.Name, s.At)
	}
	bf := at[StrategyBreadthFirst]
	for _, name := range []string{StrategyBestFirst, StrategyIPageRank, StrategyIPageRankTunnel} {
		if p := at[name]; p.Harvest < 1.5*bf.Harvest || p.Recall < 1.5*bf.Recall || p.Harvest < 0.7 {
			t.Errorf("%s at 1000 pages: %+v, breadth-first %+v", name, p, bf)
		}
	}
	if ip, best := at[StrategyIPageRank], at[StrategyBestFirst]; ip.Harvest < best.Harvest-0.05 {
		t.Errorf("ipagerank %+v far below best-first %+v", ip, best)
	}

	var b bytes.Buffer
	if err := rep.JSON(&b); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Strategies []struct {
			Name string
			At   []struct {
				Pages           int
				Harvest, Recall float64
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &js); err != nil || len(js.Strategies) != len(Strategies()) || js.Strategies[0].Name != StrategyBreadthFirst ||
		js.Strategies[0].At[1].Pages != 500 || js.Strategies[0].At[1].Harvest != rep.Strategies[0].At[1].Harvest {
		t.Errorf("JSON %v:\n%s", err, b.String())
	}
	b.Reset()
	if err := rep.Markdown(&b); err != nil || !strings.Contains(b.String(), "| ipagerank | 1000 |") {
		t.Errorf("table %v:\n%s", err, b.String())
	}
	for _, ext := range []string{".png", ".svg"} {
		file := filepath.Join(t.TempDir(), "focus"+ext)
		if err := rep.SavePlot(file); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(file); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", file, err)
		}
	}
	if _, err := EvalFocus(context.Background(), FocusConfig{Strategies: []string{"random"}}); err == nil {
		t.Error("an unknown strategy was accepted")
	}
}
