package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/trawl/trawl/bench/internal/proc"
)

// buildColly builds the colly harness (its own Go module) into dir.
func buildColly(ctx context.Context, o options, dir string) (string, error) {
	src, err := filepath.Abs(o.collyDir)
	if err != nil {
		return "", fmt.Errorf("-colly-dir: %w", err)
	}
	bin := filepath.Join(dir, "colly-peer")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the colly harness in %s: %w\n%s", src, err, out)
	}
	return bin, nil
}

// runPeer measures one peer on the URL list. colly is the colly harness
// binary; shuffledFile the URL list in random order (colly, Scrapy);
// wgetLists the lists of the wget processes, split by host; self this
// harness (its wgetpool mode).
func runPeer(ctx context.Context, log *slog.Logger, o options, peer, colly, shuffledFile string, wgetLists []string, self string) (row, error) {
	log.Info("peer", "peer", peer)
	switch peer {
	case "colly":
		m, err := measure(ctx, "colly", os.Stderr, colly, "-urls", shuffledFile,
			"-connections", strconv.Itoa(o.conns), "-agent", o.agent+"-colly")
		if err != nil {
			return row{}, err
		}
		return row{name: "colly", wall: m.wall, rss: m.maxRSS, note: string(m.stdout)}, nil
	case "scrapy":
		spider, err := filepath.Abs(o.scrapySpider)
		if err != nil {
			return row{}, fmt.Errorf("-scrapy-spider: %w", err)
		}
		m, err := measure(ctx, "scrapy", os.Stderr, o.python, "-m", "scrapy", "runspider", spider,
			"-a", "urls="+shuffledFile, "-s", "CONCURRENT_REQUESTS="+strconv.Itoa(o.conns),
			"-s", "USER_AGENT="+o.agent+"-scrapy")
		if err != nil {
			return row{}, err
		}
		return row{name: "scrapy", wall: m.wall, rss: m.maxRSS, note: string(m.stdout)}, nil
	case "wget":
		m, err := measure(ctx, "wget x"+strconv.Itoa(len(wgetLists)), os.Stderr, self,
			append([]string{"wgetpool", o.wget, o.agent + "-wget"}, wgetLists...)...)
		if err != nil {
			return row{}, err
		}
		var pr poolResult
		if err := json.Unmarshal(m.stdout, &pr); err != nil {
			return row{}, fmt.Errorf("wgetpool: reading its result %q: %w", m.stdout, err)
		}
		return row{name: fmt.Sprintf("wget x%d processes", len(wgetLists)), wall: m.wall, rss: pr.PeakRSSSum, note: string(m.stdout)}, nil
	case "wget1":
		all, err := concatFiles(wgetLists, filepath.Join(filepath.Dir(wgetLists[0]), "wget-all.txt"))
		if err != nil {
			return row{}, err
		}
		u, stopped, err := runWget(ctx, o.wget, o.agent+"-wget1", all, o.wget1Limit)
		if err != nil {
			return row{}, err
		}
		return row{name: "wget x1 process", wall: u.Wall, rss: u.PeakRSS, partial: stopped}, nil
	}
	return row{}, fmt.Errorf("-peers: unknown peer %q (want colly, scrapy, wget, wget1)", peer)
}

// wgetLists splits urls over at most n files by host, each host's URLs
// together and in list order, the busiest hosts first to the least loaded
// file, and writes them to e.dir.
func (e *webEnv) wgetLists(urls []string, n int) ([]string, error) {
	byHost := map[int][]string{}
	var order []int
	for _, u := range urls {
		h, ok := e.hostOf(u)
		if !ok {
			return nil, fmt.Errorf("URL %s names no host of the web", u)
		}
		if _, seen := byHost[h]; !seen {
			order = append(order, h)
		}
		byHost[h] = append(byHost[h], u)
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(byHost[b]) - len(byHost[a]) })
	lists := make([][]string, min(n, len(order)))
	for _, h := range order {
		k := 0
		for i := range lists {
			if len(lists[i]) < len(lists[k]) {
				k = i
			}
		}
		lists[k] = append(lists[k], byHost[h]...)
	}
	var files []string
	for i, l := range lists {
		f, err := e.writeLines(fmt.Sprintf("wget-%03d.txt", i), l)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// concatFiles writes the files one after another into out.
func concatFiles(files []string, out string) (string, error) {
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("reading %s: %w", f, err)
		}
		all = append(all, b...)
	}
	if err := os.WriteFile(out, all, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	return out, nil
}

// wgetArgs are wget's arguments for a URL list: no recursion (the URL set
// is the list), bodies to /dev/null, one try, no redirects followed, a 30 s
// timeout. wget reads robots.txt only when recursing.
func wgetArgs(agent, list string) []string {
	return []string{"--quiet", "--no-config", "--output-document=/dev/null", "--input-file=" + list,
		"--max-redirect=0", "--tries=1", "--timeout=30", "--no-cookies", "--user-agent=" + agent}
}

// runWget runs one wget over a list, stopped after limit (0: none). wget
// exits 8 when a server answered an error status (the list has 404s): not
// a failure here.
func runWget(ctx context.Context, wget, agent, list string, limit time.Duration) (u proc.Usage, stopped bool, err error) {
	cctx := ctx
	if limit > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	cmd := exec.CommandContext(cctx, wget, wgetArgs(agent, list)...)
	cmd.Stderr = os.Stderr
	u, err = proc.Run(cmd)
	var ee *exec.ExitError
	switch {
	case err == nil:
	case limit > 0 && cctx.Err() != nil && ctx.Err() == nil:
		return u, true, nil
	case errors.As(err, &ee) && ee.ExitCode() == 8:
	default:
		return u, false, fmt.Errorf("wget -i %s: %w", list, err)
	}
	return u, false, nil
}

// poolResult is what the wgetpool mode prints.
type poolResult struct {
	Processes int `json:"processes"`
	// PeakRSSSum is the sum of the processes' peak RSS (an upper bound on
	// the pool's); PeakRSSMax the largest.
	PeakRSSSum int64 `json:"peak_rss_sum"`
	PeakRSSMax int64 `json:"peak_rss_max"`
}

// wgetPoolMain is the wgetpool mode: run one wget per list file at once,
// wait for all, print a poolResult.
func wgetPoolMain(args []string) error {
	if len(args) < 3 {
		return errors.New("usage: wgetpool WGET AGENT LIST...")
	}
	wget, agent, lists := args[0], args[1], args[2:]
	var (
		mu   sync.Mutex
		res  = poolResult{Processes: len(lists)}
		errs []error
		wg   sync.WaitGroup
	)
	for _, l := range lists {
		wg.Go(func() {
			u, _, err := runWget(context.Background(), wget, agent, l, 0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
			}
			res.PeakRSSSum += u.PeakRSS
			res.PeakRSSMax = max(res.PeakRSSMax, u.PeakRSS)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}
