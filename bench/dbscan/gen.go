package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/simweb"
)

// genMeta is what the gen child reports: the data set and the eps values
// resolved for it.
type genMeta struct {
	Points int `json:"points"`
	// Pages is the number of pages simweb generated (content and
	// special); Candidates the content pages answering 200, of which the
	// first Points in page id order were used.
	Pages      int     `json:"pages"`
	Candidates int     `json:"candidates"`
	Hosts      int     `json:"hosts"`
	Seed       uint64  `json:"seed"`
	Knee       float64 `json:"knee"`
	GenSeconds float64 `json:"gen_seconds"`
	// Eps lists the eps values to run, in order, with the estimated mean
	// neighbourhood size (itself included) of each.
	Eps []epsInfo `json:"eps"`
}

// epsInfo is one eps to run and its estimated mean neighbourhood size.
type epsInfo struct {
	Eps        float64 `json:"eps"`
	Name       string  `json:"name"`
	Neighbours float64 `json:"neighbours"`
}

// genOptions are the gen child's arguments.
type genOptions struct {
	out, meta  string
	n, hosts   int
	seed       uint64
	eps        []string // numbers or "knee"
	minPts     int
	sampleSize int // points whose neighbourhoods estimate the mean size
}

// genMain generates the feature rows in a process of its own (so the
// measured children do not inherit its memory high-water mark) and writes
// them as CSV to o.out and the genMeta as JSON to o.meta.
func genMain(ctx context.Context, o genOptions) error {
	start := time.Now()
	pts, meta, err := webFeatures(ctx, o.n, o.hosts, o.seed)
	if err != nil {
		return err
	}
	if err := writeCSV(o.out, pts); err != nil {
		return err
	}
	meta.Knee, err = dbscan.SuggestEps(pts, o.minPts)
	if err != nil {
		return fmt.Errorf("suggesting eps: %w", err)
	}
	for _, e := range o.eps {
		info := epsInfo{Name: e}
		if e == "knee" {
			info.Eps = meta.Knee
		} else if info.Eps, err = strconv.ParseFloat(e, 64); err != nil || info.Eps <= 0 {
			return fmt.Errorf("eps %q: want a positive number or knee", e)
		}
		info.Neighbours = meanNeighbours(pts, info.Eps, o.sampleSize, o.seed)
		meta.Eps = append(meta.Eps, info)
	}
	meta.GenSeconds = time.Since(start).Seconds()
	b, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(o.meta, b, 0o644)
}

// webFeatures generates a simweb web of at least n content pages on hosts
// hosts and returns the standardized features of the first n content
// pages that answer 200 (in page id order): dbscan.FeatureVector of the
// page's simweb.Features (words and bytes from rendering version 0), then
// z-scores over the n rows.
func webFeatures(ctx context.Context, n, hosts int, seed uint64) (dbscan.Points, genMeta, error) {
	pts, meta, err := rawFeatures(ctx, n, hosts, seed)
	if err != nil {
		return pts, meta, err
	}
	if err := dbscan.FitScaler(pts).Apply(pts); err != nil {
		return dbscan.Points{}, genMeta{}, fmt.Errorf("standardizing: %w", err)
	}
	return pts, meta, nil
}

// rawWebFeatures is webFeatures' points before standardization.
func rawWebFeatures(ctx context.Context, n, hosts int, seed uint64) (dbscan.Points, error) {
	pts, _, err := rawFeatures(ctx, n, hosts, seed)
	return pts, err
}

// rawFeatures is webFeatures without the standardization.
func rawFeatures(ctx context.Context, n, hosts int, seed uint64) (dbscan.Points, genMeta, error) {
	// A few percent of content pages answer 500; ask for enough.
	cfg := simweb.Config{Seed: seed, Hosts: hosts, Pages: n + n/20 + 64}
	w, err := simweb.New(cfg)
	if err != nil {
		return dbscan.Points{}, genMeta{}, fmt.Errorf("simweb: %w", err)
	}
	total := w.NumPages()
	// Page renders the body for Words and Bytes: do it on every CPU, in
	// id order per block so the first n candidates are taken exactly.
	rows := make([][dbscan.NumFeatures]float64, total)
	ok := make([]bool, total)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	const block = 4096
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := range next {
				for id := lo; id < min(lo+block, total); id++ {
					p := w.Page(id)
					if !p.Kind.IsContent() || p.Status != 200 {
						continue
					}
					f := p.Features
					rows[id] = dbscan.FeatureVector(crawldb.Features{
						Words: f.Words, Outlinks: f.Outlinks, Inlinks: f.Inlinks,
						Images: f.Images, Depth: f.Depth, Bytes: f.Bytes,
					})
					ok[id] = true
				}
			}
		}()
	}
feed:
	for lo := 0; lo < total; lo += block {
		select {
		case next <- lo:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return dbscan.Points{}, genMeta{}, err
	}
	pts := dbscan.NewPoints(dbscan.NumFeatures, n)
	candidates := 0
	for id := range total {
		if !ok[id] {
			continue
		}
		candidates++
		if pts.Len() < n {
			if err := pts.Append(rows[id][:]); err != nil {
				return dbscan.Points{}, genMeta{}, err
			}
		}
	}
	if pts.Len() < n {
		return dbscan.Points{}, genMeta{}, fmt.Errorf("simweb gave %d content pages answering 200, want %d", pts.Len(), n)
	}
	return pts, genMeta{Points: n, Pages: total, Candidates: candidates, Hosts: hosts, Seed: seed}, nil
}

// writeCSV writes pts with a header of the feature names, every value in
// the shortest form that parses back to the same float64 (so Go and
// Python read identical points).
func writeCSV(path string, pts dbscan.Points) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	names := dbscan.FeatureNames()
	for k, name := range names {
		if k > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(name)
	}
	bw.WriteByte('\n')
	var buf []byte
	for i := range pts.Len() {
		buf = buf[:0]
		for k, v := range pts.At(i) {
			if k > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendFloat(buf, v, 'g', -1, 64)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// meanNeighbours estimates the mean neighbourhood size (itself included)
// at eps by brute force over a random sample of the points, on every CPU.
// scikit-learn stores every neighbourhood, so this predicts its memory.
func meanNeighbours(pts dbscan.Points, eps float64, sample int, seed uint64) float64 {
	n := pts.Len()
	sample = min(sample, n)
	r := rand.New(rand.NewPCG(seed, 7))
	idx := make([]int, sample)
	for i := range idx {
		idx[i] = r.IntN(n)
	}
	counts := make([]int64, sample)
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := k; s < sample; s += workers {
				x := pts.At(idx[s])
				c := int64(0)
				for j := range n {
					if dbscan.Within(x, pts.At(j), eps) {
						c++
					}
				}
				counts[s] = c
			}
		}()
	}
	wg.Wait()
	sum := int64(0)
	for _, c := range counts {
		sum += c
	}
	if sample == 0 {
		return math.NaN()
	}
	return float64(sum) / float64(sample)
}
