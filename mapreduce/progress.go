package mapreduce

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progressBatch is how many records a task reads between adds to its
// phase's shared record count: the per-record cost is one comparison.
const progressBatch = 1024

// barRefresh is the period at which a terminal progress bar is redrawn.
const barRefresh = 200 * time.Millisecond

// progress reports the records a job's phases have processed out of their
// total: a progress bar on a terminal, otherwise a log line every interval
// and one when each phase ends (for cron). Tasks add to it through a
// taskProgress each, in batches, with atomic adds; one goroutine per phase
// reads the count and draws the bar or writes the log line.
type progress struct {
	log      *slog.Logger
	w        io.Writer
	job      string
	tty      bool
	interval time.Duration

	mu    sync.Mutex // guards the phase's fields below
	bar   *progressbar.ProgressBar
	name  string // "map" or "reduce"
	tasks int
	total int64 // records the phase will process; < 0: unknown
	began time.Time
	quit  chan struct{}
	wg    sync.WaitGroup

	done    atomic.Int64 // tasks finished
	records atomic.Int64 // records processed by finished and running attempts
}

// newProgress reports the progress of job to w: a bar when w is a
// terminal or forceBar is set (tests), else log lines every interval (zero
// means 10s) to log.
func newProgress(w io.Writer, interval time.Duration, log *slog.Logger, job string, forceBar bool) *progress {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	p := &progress{log: log, w: w, job: job, interval: interval, tty: forceBar && w != nil}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// phase ends the current phase and starts one of tasks tasks that will
// process total records (< 0: unknown).
func (p *progress) phase(name string, tasks int, total int64) {
	p.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.tasks, p.total, p.began = name, tasks, total, time.Now()
	p.done.Store(0)
	p.records.Store(0)
	desc := p.job + " " + name
	every := p.interval
	if p.tty {
		every = barRefresh
		if total != 0 {
			p.bar = progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(p.w),
				progressbar.OptionSetDescription(desc),
				progressbar.OptionShowCount(),
				progressbar.OptionShowIts(),
				progressbar.OptionSetItsString("rec"),
				progressbar.OptionSetElapsedTime(true),
				progressbar.OptionShowElapsedTimeOnFinish(),
				progressbar.OptionSetWidth(30),
				progressbar.OptionSetRenderBlankState(true),
				progressbar.OptionSpinnerType(14),
				progressbar.OptionSetSpinnerChangeInterval(0))
		}
	}
	p.quit = make(chan struct{})
	p.wg.Add(1)
	go func(quit chan struct{}, bar *progressbar.ProgressBar) {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if bar != nil {
					_ = bar.Set64(p.shown(total))
				} else if !p.tty {
					p.logLine("progress", name, tasks, total)
				}
			}
		}
	}(p.quit, p.bar)
}

// shown is the record count to show: never below zero, never above a
// known total (a failed attempt's records are taken back when it is
// retried, but a count read between the two can be briefly high).
func (p *progress) shown(total int64) int64 {
	n := max(p.records.Load(), 0)
	if total >= 0 {
		n = min(n, total)
	}
	return n
}

// logLine logs the phase's records done and total, percent, rate and
// tasks done.
func (p *progress) logLine(msg, name string, tasks int, total int64) {
	el := time.Since(p.began)
	n := p.shown(total)
	attrs := []any{"phase", name, "records", n}
	if total >= 0 {
		pct := 100.0
		if total > 0 {
			pct = float64(n) * 100 / float64(total)
		}
		attrs = append(attrs, "total", total, "percent", fmt.Sprintf("%.1f", pct))
	}
	attrs = append(attrs, "records_per_s", int64(float64(n)/max(el.Seconds(), 1e-9)),
		"tasks_done", p.done.Load(), "tasks", tasks, "elapsed", el.Round(time.Millisecond))
	p.log.Info(msg, attrs...)
}

// stop ends the current phase: the bar is drawn a last time and left on
// its line, or a last log line is written.
func (p *progress) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quit == nil {
		return
	}
	close(p.quit)
	p.quit = nil
	p.wg.Wait()
	switch {
	case p.bar != nil:
		_ = p.bar.Set64(p.shown(p.total))
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
		p.bar = nil
	case p.tty:
		fmt.Fprintf(p.w, "%s %s: no records (%s)\n", p.job, p.name, time.Since(p.began).Round(time.Millisecond))
	default:
		p.logLine("phase ended", p.name, p.tasks, p.total)
	}
}

// task returns the counter of one task attempt.
func (p *progress) task() *taskProgress { return &taskProgress{p: p} }

// taskProgress adds one task attempt's records to its phase's count in
// batches of progressBatch. A nil *taskProgress does nothing.
type taskProgress struct {
	p        *progress
	reported int64 // records added to p so far
}

// update tells the attempt has processed n records in all.
func (tp *taskProgress) update(n int64) {
	if tp != nil && n-tp.reported >= progressBatch {
		tp.p.records.Add(n - tp.reported)
		tp.reported = n
	}
}

// finish counts the attempt done, having processed n records in all.
func (tp *taskProgress) finish(n int64) {
	if tp == nil {
		return
	}
	tp.p.records.Add(n - tp.reported)
	tp.reported = n
	tp.p.done.Add(1)
}

// abort takes back what a failed attempt added, so that its retry does
// not count the same records twice.
func (tp *taskProgress) abort() {
	if tp == nil {
		return
	}
	tp.p.records.Add(-tp.reported)
	tp.reported = 0
}

// countingSource is a recordSource that reports the records read from it.
type countingSource struct {
	src recordSource
	n   int64
	tp  *taskProgress
}

func (c *countingSource) next() (int, []byte, []byte, error) {
	part, key, val, err := c.src.next()
	if err == nil {
		c.n++
		c.tp.update(c.n)
	}
	return part, key, val, err
}
