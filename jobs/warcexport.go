package jobs

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/warc"
)

// JobWARCExport is the WARC export job's name (and counter group).
const JobWARCExport = "warc-export"

// WARCExportOptions configures ExportWARC.
type WARCExportOptions struct {
	// Segments are the segments (URIs) to export; each needs a published
	// content directory.
	Segments []string
	// Out is the directory (URI) to write the WARC files and indexes of
	// every segment into, as one job; "" writes each segment's into its
	// own warc directory (segment.DirWARC), one job per segment.
	Out string
	// Force replaces an existing output (removed before the job runs:
	// it is derived from the segment's content, which stays); without
	// it an existing output is an error and is left as it is.
	Force bool
	// WARC configures the files.
	WARC WARCOptions
}

// WARCExportResult reports an ExportWARC.
type WARCExportResult struct {
	// Outputs are the directories written (URIs).
	Outputs []string
	// Responses counts the response records written (one per content
	// row); Files the WARC files written, Bytes their bytes and their
	// indexes'.
	Responses, Files, Bytes int64
	// Duration is the wall time of the export.
	Duration time.Duration
}

// Counters of the WARC export job.
const (
	ctrWARCResponses = "responses"
)

// ExportWARC writes the content of fetched segments as WARC/1.1 files
// with CDXJ indexes (package warc), as a fetch with FetchOptions.WARC
// writes them, but with response records alone: a segment keeps no
// request, and its content rows are the fetch_success pages (HTTP 200)
// with the headers and decoded bodies the fetcher stored. The job is
// map-only, one map task per content part file, each writing its own
// files (their host part carries the task's number); its output is
// published at once when the job succeeds, and nothing when it fails.
//
// Exporting into a segment's warc directory takes the segment's lock (a
// fetch, parse or updatedb of it at the same time fails at once, as an
// export does when one of them holds it).
func ExportWARC(ctx context.Context, env Env, o WARCExportOptions) (_ *WARCExportResult, err error) {
	start := time.Now()
	log := env.log().With("job", JobWARCExport)
	if len(o.Segments) == 0 {
		return nil, errors.New("warc export: no segment given")
	}
	if err := o.WARC.Validate(); err != nil {
		return nil, fmt.Errorf("warc export: %w", err)
	}
	res := &WARCExportResult{}
	var contents []string
	for _, seg := range o.Segments {
		fsys, segPath, rerr := env.resolver().Resolve(seg)
		if rerr != nil {
			return nil, fmt.Errorf("warc export: segment %s: %w", seg, rerr)
		}
		sl, st, lerr := env.takeSegment(fsys, segPath, JobWARCExport, log)
		if lerr != nil {
			return nil, fmt.Errorf("warc export: %w", lerr)
		}
		defer env.unlock(sl, &err)
		if !st.Has(segment.DirContent) {
			return nil, fmt.Errorf("warc export: segment %s has no published %s (was it fetched?)", seg, segment.DirContent)
		}
		contents = append(contents, storage.Join(seg, segment.DirContent))
	}
	run := func(inputs []string, out string) error {
		fsys, p, err := env.resolver().Resolve(out)
		if err != nil {
			return fmt.Errorf("warc export: output %s: %w", out, err)
		}
		if ok, err := storage.Exists(fsys, p); err != nil {
			return fmt.Errorf("warc export: output %s: %w", out, err)
		} else if ok {
			if !o.Force {
				return fmt.Errorf("warc export: output %s already exists; remove it or give --force to replace it", out)
			}
			log.Info("replacing an existing WARC export", "output", out)
			if err := fsys.RemoveAll(p); err != nil {
				return fmt.Errorf("warc export: remove %s: %w", out, err)
			}
		}
		if err := fsys.MkdirAll(path.Dir(p)); err != nil {
			return fmt.Errorf("warc export: create %s: %w", path.Dir(out), err)
		}
		jr, err := env.Run(ctx, warcExport{Contents: inputs, Out: out, Options: o.WARC})
		if err != nil {
			return fmt.Errorf("warc export: %w", err)
		}
		res.Outputs = append(res.Outputs, out)
		res.Responses += jr.Counters.Get(JobWARCExport, ctrWARCResponses)
		infos, err := fsys.ReadDir(p)
		if err != nil {
			return fmt.Errorf("warc export: list %s: %w", out, err)
		}
		for _, fi := range infos {
			if strings.HasSuffix(fi.Name(), ".warc.gz") {
				res.Files++
			}
			if !strings.HasPrefix(fi.Name(), "_") {
				res.Bytes += fi.Size()
			}
		}
		return nil
	}
	if o.Out != "" {
		if err := run(contents, o.Out); err != nil {
			return nil, err
		}
	} else {
		for i, seg := range o.Segments {
			if err := run(contents[i:i+1], warcDir(seg)); err != nil {
				return nil, err
			}
		}
	}
	res.Duration = time.Since(start)
	log.Info("warc export done", "outputs", len(res.Outputs), "responses", res.Responses, "files", res.Files,
		"bytes", res.Bytes, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// warcExport is the WARC export job's spec: content directories (URIs)
// and the output directory.
type warcExport struct {
	Contents []string
	Out      string
	Options  WARCOptions
}

func (warcExport) JobName() string { return JobWARCExport }

// Job builds the export job: map-only, one task per content part, each
// content row a response record.
func (s warcExport) Job() (mapreduce.Runnable, error) {
	if len(s.Contents) == 0 || s.Out == "" {
		return nil, errors.New("warc export job: needs content directories and an output")
	}
	if err := s.Options.Validate(); err != nil {
		return nil, fmt.Errorf("warc export job: %w", err)
	}
	mapFn := func(t *mapreduce.Task, c segment.Content, emit mapreduce.Emit[*warc.Exchange]) error {
		t.Count(ctrWARCResponses, 1)
		emit(c.URL, exchangeOfContent(&c))
		return nil
	}
	var ins []mapreduce.Input[*warc.Exchange]
	for _, dir := range s.Contents {
		ins = append(ins, mapreduce.From(dir, mapFn, mapreduce.WholeFiles(), mapreduce.RequireSuccess()))
	}
	return &mapreduce.Job[*warc.Exchange, *warc.Exchange]{
		Name:    JobWARCExport,
		Inputs:  ins,
		MapOnly: true,
		Outputs: []mapreduce.Output[*warc.Exchange]{
			warcOutput(s.Out, s.Options, "", func(e **warc.Exchange) *warc.Exchange { return *e }),
		},
	}, nil
}
