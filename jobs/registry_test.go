package jobs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
)

// streamingRunner runs each engine job as Hadoop Streaming would (a
// map-only job as streamingMapOnly does): the job
// is rebuilt from its name and Conf through Registry in every task, map
// tasks read split manifests, their output lines are sorted as bytes
// (LC_ALL=C sort) and split by partition, each reduce task writes its parts
// into its own work directory, and PublishStreaming commits them.
func streamingRunner(t *testing.T, res mapreduce.Resolver, work string) mapreduce.Runner {
	reg := Registry()
	mapOnly := streamingMapOnly(t, res)
	n := 0
	return mapreduce.RunnerFunc(func(ctx context.Context, spec mapreduce.Spec) (*mapreduce.Result, error) {
		n++
		name := spec.JobName()
		conf, err := mapreduce.SpecConf(spec)
		if err != nil {
			return nil, err
		}
		build, ok := reg[name]
		if !ok {
			return nil, fmt.Errorf("job %s is not in the Registry", name)
		}
		// The task entry gets the conf through an environment variable.
		enc := mapreduce.EncodeConf(conf)
		conf2, err := mapreduce.DecodeConf(enc)
		if err != nil {
			return nil, err
		}
		job, err := build(conf2)
		if err != nil {
			return nil, err
		}
		info, err := mapreduce.Describe(job)
		if err != nil {
			return nil, err
		}
		if info.MapOnly {
			return mapOnly.Run(ctx, spec)
		}
		reduces := max(info.Reduces, 1)
		counters := &mapreduce.Counters{}
		environ := func(part int, attempt, outDir string) func(string) string {
			return func(k string) string {
				switch k {
				case mapreduce.EnvJobName:
					return name
				case mapreduce.EnvJobConf:
					return enc
				case mapreduce.EnvTaskPartition:
					return strconv.Itoa(part)
				case mapreduce.EnvTaskAttempt:
					return attempt
				case mapreduce.EnvTaskOutputDir:
					return outDir
				case mapreduce.EnvJobReduces:
					return strconv.Itoa(reduces)
				}
				return ""
			}
		}
		splits, err := mapreduce.Splits(ctx, res, job)
		if err != nil {
			return nil, err
		}
		var lines [][]byte
		for i, sp := range splits {
			var out, errb bytes.Buffer
			in := strings.NewReader(fmt.Sprintf("%d\t%s\n", i*100, sp))
			if err := mapreduce.RunStreamingTask(ctx, reg, "map", environ(i, fmt.Sprintf("attempt_x_m_%06d_0", i), ""), in, &out, &errb,
				mapreduce.WithStorage(res), mapreduce.WithTempDir(t.TempDir())); err != nil {
				return nil, fmt.Errorf("map %d: %w\n%s", i, err, errb.String())
			}
			if err := mapreduce.ParseCounterLines(&errb, counters); err != nil {
				return nil, err
			}
			for _, l := range bytes.SplitAfter(out.Bytes(), []byte("\n")) {
				if len(l) > 0 {
					lines = append(lines, l)
				}
			}
		}
		sort.Slice(lines, func(i, j int) bool { return bytes.Compare(lines[i], lines[j]) < 0 })
		byPart := map[int][]byte{}
		for _, l := range lines {
			p, err := strconv.Atoi(string(l[:5]))
			if err != nil {
				return nil, fmt.Errorf("map output line %q: %w", l, err)
			}
			byPart[p] = append(byPart[p], l...)
		}
		var dirs []string
		for p := 0; p < reduces; p++ {
			dir := filepath.Join(work, fmt.Sprintf("job%d-r%05d", n, p))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, err
			}
			dirs = append(dirs, dir)
			var errb bytes.Buffer
			if err := mapreduce.RunStreamingTask(ctx, reg, "reduce", environ(p, fmt.Sprintf("attempt_x_r_%06d_0", p), dir),
				bytes.NewReader(byPart[p]), &bytes.Buffer{}, &errb, mapreduce.WithStorage(res), mapreduce.WithTempDir(t.TempDir())); err != nil {
				return nil, fmt.Errorf("reduce %d: %w\n%s", p, err, errb.String())
			}
			if err := mapreduce.ParseCounterLines(&errb, counters); err != nil {
				return nil, err
			}
		}
		if err := mapreduce.PublishStreaming(ctx, res, job, dirs, counters); err != nil {
			return nil, err
		}
		return &mapreduce.Result{Counters: counters}, nil
	})
}

// TestRegistryStreamingEqualsLocal runs a round (inject, generate with topN
// and a host limit, updatedb) once on the local runner and once with every
// job rebuilt from its Conf by Registry and run as Streaming tasks: the
// fetch lists and CrawlDBs must be identical.
func TestRegistryStreamingEqualsLocal(t *testing.T) {
	now := genNow()
	var seeds strings.Builder
	for i := 0; i < 60; i++ {
		fmt.Fprintf(&seeds, "http://h%d.example/p%d\tscore=%d\n", i%7, i, i%5)
	}
	type outcome struct {
		fetchList []segment.Generate
		db        map[string]crawldb.Datum
		selected  int64
	}
	run := func(streaming bool) outcome {
		env := testEnv(t)
		if streaming {
			env.Runner = streamingRunner(t, env.Storage, filepath.Join(t.TempDir(), "work"))
		}
		p := filepath.Join(t.TempDir(), "seeds.txt")
		writeFile(t, p, seeds.String())
		if _, err := Inject(context.Background(), env, InjectOptions{Seeds: []string{p}, Now: now, Schedule: defaultSched}); err != nil {
			t.Fatal(err)
		}
		gen, err := Generate(context.Background(), env, GenerateOptions{Now: now, TopN: 25, MaxPerHost: 5, NumFetchers: 2,
			SelectReducers: 3, Schedule: defaultSched})
		if err != nil {
			t.Fatal(err)
		}
		var fl []segment.Generate
		var fetches []segment.Fetch
		var parses []segment.ParseUpdate
		parts := fetchList(t, gen.Segment)
		names := make([]string, 0, len(parts))
		for n := range parts {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			for _, d := range parts[n] {
				d.GenerateTime = time.Time{}
				fl = append(fl, d)
				fetches = append(fetches, fetchOf(d, crawldb.StatusFetchSuccess, now.Add(time.Minute)))
				parses = append(parses, sigUpdate(d.URL, "s-"+d.URL, now.Add(time.Minute), 10),
					linkUpdate(d.URL, d.URL+"/child", OPICLinkCash(d.Score, 1), now.Add(time.Minute)))
			}
		}
		writeSegmentStage(t, gen.Segment, segment.DirFetch, fetches)
		writeSegmentStage(t, gen.Segment, segment.DirCrawlParse, parses)
		if _, err := UpdateDB(context.Background(), env, UpdateOptions{Segments: []string{gen.Segment}, Now: now, Schedule: defaultSched}); err != nil {
			t.Fatal(err)
		}
		return outcome{fetchList: fl, db: readDB(t, env), selected: gen.Selected}
	}
	local, streamed := run(false), run(true)
	if local.selected != 25 || streamed.selected != 25 {
		t.Errorf("selected %d locally, %d streamed; want 25", local.selected, streamed.selected)
	}
	if !reflect.DeepEqual(local.fetchList, streamed.fetchList) {
		t.Errorf("fetch lists differ:\nlocal    %v\nstreamed %v", urlsOf(local.fetchList), urlsOf(streamed.fetchList))
	}
	if len(local.db) != 85 || !reflect.DeepEqual(local.db, streamed.db) {
		t.Errorf("CrawlDBs differ (%d and %d rows, want 85)", len(local.db), len(streamed.db))
	}
}

func urlsOf(ds []segment.Generate) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.URL)
	}
	return out
}

func TestRegistryRejectsBadConf(t *testing.T) {
	for name, build := range Registry() {
		if _, err := build(map[string]string{}); err == nil {
			t.Errorf("%s built from an empty conf", name)
		}
		if _, err := build(map[string]string{mapreduce.ConfSpec: `{"Now": "yesterday"`}); err == nil {
			t.Errorf("%s built from a truncated spec", name)
		}
		if _, err := build(map[string]string{mapreduce.ConfSpec: `{}`}); err == nil {
			t.Errorf("%s built from an empty spec (no input, no output)", name)
		}
	}
}
