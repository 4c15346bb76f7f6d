package main

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/trawl/trawl/dbscan"
)

// TestFeaturesRoundTrip generates a small web's features, writes them as
// CSV and checks that dbscan.ReadCSV (what trawl dbscan reads) gets back
// the same float64 values bit for bit, that they are standardized, and
// that the cluster child writes the labels dbscan.Cluster gives.
func TestFeaturesRoundTrip(t *testing.T) {
	ctx := context.Background()
	const n = 3000
	pts, meta, err := webFeatures(ctx, n, 30, 1)
	if err != nil {
		t.Fatal(err)
	}
	if pts.Len() != n || pts.Dim != dbscan.NumFeatures || meta.Candidates < n || meta.Pages < meta.Candidates {
		t.Fatalf("%d points of dim %d, meta %+v", pts.Len(), pts.Dim, meta)
	}
	for k := range pts.Dim {
		var sum, sq float64
		for i := range n {
			sum += pts.At(i)[k]
		}
		mean := sum / n
		for i := range n {
			d := pts.At(i)[k] - mean
			sq += d * d
		}
		if std := math.Sqrt(sq / n); math.Abs(mean) > 1e-9 || math.Abs(std-1) > 1e-9 {
			t.Errorf("feature %d: mean %v std %v, want 0 and 1", k, mean, std)
		}
	}
	again, _, err := webFeatures(ctx, n, 30, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range pts.Data {
		if math.Float64bits(v) != math.Float64bits(again.Data[i]) {
			t.Fatalf("value %d: %v, then %v: generation is not deterministic", i, v, again.Data[i])
		}
	}

	dir := t.TempDir()
	csvPath := filepath.Join(dir, "points.csv")
	if err := writeCSV(csvPath, pts); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	back, header, err := dbscan.ReadCSV(f, csvPath)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(header) != dbscan.NumFeatures || header[0] != "words" || back.Len() != n {
		t.Fatalf("read back %d points, header %v", back.Len(), header)
	}
	for i, v := range pts.Data {
		if math.Float64bits(v) != math.Float64bits(back.Data[i]) {
			t.Fatalf("value %d: wrote %v, read %v", i, v, back.Data[i])
		}
	}

	const eps, minPts = 0.5, 6
	want, err := dbscan.Cluster(ctx, pts, dbscan.Params{Eps: eps, MinPts: minPts})
	if err != nil {
		t.Fatal(err)
	}
	if want.Clusters < 2 {
		t.Fatalf("only %d clusters: the check below would be weak", want.Clusters)
	}
	labelsPath := filepath.Join(dir, "labels.csv")
	if err := clusterCmd([]string{csvPath, strconv.FormatFloat(eps, 'g', -1, 64), strconv.Itoa(minPts), labelsPath}); err != nil {
		t.Fatal(err)
	}
	got, err := readLabels(labelsPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d labels for %d points", len(got), n)
	}
	for i := range got {
		if got[i] != want.Labels[i] {
			t.Fatalf("point %d: label %d, dbscan.Cluster says %d", i, got[i], want.Labels[i])
		}
	}
	if c, _ := summarize(got); c != want.Clusters {
		t.Errorf("summarize: %d clusters, want %d", c, want.Clusters)
	}
}

// TestReadLabelsErrors checks that bad label files name the file and line.
func TestReadLabelsErrors(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"header.csv": "cluster\n1\n",
		"value.csv":  "label\n1\nx\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readLabels(p); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
	}
	p := filepath.Join(dir, "core.txt")
	if err := os.WriteFile(p, []byte("0\n5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readIndices(p, 5); err == nil {
		t.Error("index 5 of 5 points: no error")
	}
	if idx, err := readIndices(p, 6); err != nil || len(idx) != 2 || idx[1] != 5 {
		t.Errorf("readIndices = %v, %v", idx, err)
	}
}
