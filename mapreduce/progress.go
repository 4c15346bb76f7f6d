package mapreduce

import (
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress reports tasks done and records processed: a progress bar on a
// terminal, otherwise a log line every interval (for cron).
type progress struct {
	log      *slog.Logger
	w        io.Writer
	tty      bool
	interval time.Duration

	mu      sync.Mutex
	bar     *progressbar.ProgressBar
	name    string
	total   int
	done    atomic.Int64
	records atomic.Int64
	began   time.Time
	quit    chan struct{}
	wg      sync.WaitGroup
}

func newProgress(w io.Writer, interval time.Duration, log *slog.Logger) *progress {
	if interval <= 0 {
		interval = 10 * time.Second
	}
	p := &progress{log: log, w: w, interval: interval}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		p.tty = true
	}
	return p
}

// phase starts a phase of total tasks.
func (p *progress) phase(name string, total int) {
	p.stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.name, p.total, p.began = name, total, time.Now()
	p.done.Store(0)
	p.records.Store(0)
	if p.tty {
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(p.w),
			progressbar.OptionSetDescription(name), progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
		return
	}
	p.quit = make(chan struct{})
	p.wg.Add(1)
	go func(quit chan struct{}) {
		defer p.wg.Done()
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				el := time.Since(p.began).Seconds()
				rec := p.records.Load()
				p.log.Info("progress", "phase", name, "tasks_done", p.done.Load(), "tasks", total,
					"records", rec, "records_per_s", int64(float64(rec)/max(el, 1e-9)))
			}
		}
	}(p.quit)
}

// add records a finished task and its records.
func (p *progress) add(records int64) {
	p.done.Add(1)
	p.records.Add(records)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// stop ends the current phase.
func (p *progress) stop() {
	p.mu.Lock()
	q := p.quit
	p.quit = nil
	if p.bar != nil {
		_ = p.bar.Finish()
		p.bar = nil
	}
	p.mu.Unlock()
	if q != nil {
		close(q)
		p.wg.Wait()
	}
}
