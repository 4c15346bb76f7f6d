package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/segment"
	"github.com/trawl/trawl/storage"
)

// StopFile is the file that, created in the crawl directory, makes a
// running Crawl stop before its next stage (Nutch's crawl script checks
// for a STOP file the same way). Crawl removes it when it stops.
const StopFile = ".STOP"

// CrawlLockFile is the crawl lock in the crawl directory, held by Crawl
// for its whole run so that two crawls (a slow one and the next cron
// launch) never run rounds on one crawl directory at once. It is a
// crawldb lock file (see crawldb.LockWith) placed one level up.
const CrawlLockFile = crawldb.LockFile

// CrawlStateFile, in the crawl directory, records the last round Crawl
// started: its number, segment and simulated time, so that a later Crawl
// resumes a half-done round at the round's own time and continues the
// simulated clock.
const CrawlStateFile = "crawl_state.json"

// CrawlOptions configures Crawl. The job options are used as given except
// for the fields Crawl sets per round: Inject.Seeds and Inject.Now,
// Generate.Now, Fetch.Segment and Fetch.Now, Parse.Segment,
// Update.Segments and Update.Now.
type CrawlOptions struct {
	// Seeds are seed files to inject before the first round; empty means
	// no inject (the CrawlDB must exist).
	Seeds []string
	// Rounds is the number of rounds to run, a resumed half-done round
	// included; -1 means until generate finds nothing due.
	Rounds int
	// Now is the simulated time of the first new round. RoundInterval is
	// the simulated time between rounds (--days-per-round). When either
	// is set the crawl runs on simulated time: round k of this run is at
	// Now + k*RoundInterval, and without Now the clock continues from the
	// last round recorded in CrawlStateFile (or starts at the wall clock).
	// When neither is set every job uses the wall clock.
	Now           time.Time
	RoundInterval time.Duration
	// Start, if set, is where the simulated clock starts when neither Now
	// nor a recorded round gives the time (the epoch of a synthetic web);
	// it turns simulated time on like Now does.
	Start time.Time
	// Sitemaps runs Sitemap with the Sitemap options after the inject of
	// Seeds (round 1 of a new crawl), FromRobots set: the sitemaps the
	// robots.txt of the CrawlDB's hosts name, and those of
	// Sitemap.SitemapURLs, so that pages no link reaches are crawled too
	// (Nutch's crawl script with -sm). It needs Seeds.
	Sitemaps bool
	Sitemap  SitemapOptions
	// The options of the jobs a round runs.
	Inject   InjectOptions
	Generate GenerateOptions
	Fetch    FetchOptions
	Parse    ParseOptions
	Update   UpdateOptions
	// ParseJob parses each segment in a parse job after its fetch, as
	// Nutch's crawl script does. The default (false) parses in the fetch
	// job as pages arrive (FetchOptions.Parse, with the Parse options),
	// which writes the same rows for less CPU: the parse job's reading
	// and shuffling of every page's content is saved. Fetch.Parse is
	// ignored.
	ParseJob bool
	// ClusterEvery, if positive, runs Cluster with the Cluster options
	// after the updatedb of every round whose number is a multiple of it
	// (the dynamic schedule's clusters, refreshed as the crawl goes; the
	// next round's updatedb applies them). The result is named by the
	// round's time. A crash between a round's updatedb and its clustering
	// skips that clustering: the next multiple runs it.
	ClusterEvery int
	Cluster      ClusterOptions
	// LinkDB keeps the crawl's LinkDB current: after each round's
	// updatedb, InvertLinks (with the InvertLinks options, Segments set
	// per round) adds every parsed segment not yet inverted, this
	// round's and any that a crash left out.
	LinkDB      bool
	InvertLinks InvertLinksOptions
	// LinkRank configures the LinkRank run after each round's
	// invertlinks when Update.Scoring is "linkrank" (which implies
	// LinkDB).
	LinkRank LinkRankOptions
	// HostDb keeps the crawl's HostDb current: after each round's
	// updatedb (and invertlinks), UpdateHostDb adds the round's segment,
	// so that the next round's generate can skip failing hosts
	// (Generate.HostDbMaxFailureStreak).
	HostDb bool
	// SetClock, if set, is called before each round with the round's
	// simulated time (not in wall-clock mode): a crawl of simweb moves the
	// server's clock with it.
	SetClock func(ctx context.Context, t time.Time) error
	// OnRound, if set, receives each round's result when the round ends
	// (also when it stopped or failed part way).
	OnRound func(RoundResult)
}

// Validate checks o as Crawl does before it takes a lock: a positive
// number of rounds or -1, no negative round interval, clustering either off
// or with a positive eps, and every job's options as that job checks them
// (with the fields Crawl sets per round filled in: inject's seeds, the
// segment of fetch and parse).
func (o CrawlOptions) Validate() error {
	switch {
	case o.Rounds == 0 || o.Rounds < -1:
		return fmt.Errorf("rounds = %d, want a positive number or -1 (until nothing is due)", o.Rounds)
	case o.RoundInterval < 0:
		return fmt.Errorf("negative round interval %v", o.RoundInterval)
	case o.ClusterEvery < 0 || (o.ClusterEvery > 0 && !(o.Cluster.Eps > 0)):
		return fmt.Errorf("clustering every %d rounds with eps %v: want no clustering (0), or a positive eps (cluster.eps)", o.ClusterEvery, o.Cluster.Eps)
	}
	if len(o.Seeds) > 0 {
		inj := o.Inject
		inj.Seeds = o.Seeds
		if err := inj.Validate(); err != nil {
			return fmt.Errorf("inject: %w", err)
		}
	}
	if o.Sitemaps {
		sm := o.Sitemap
		sm.FromRobots = true
		if len(o.Seeds) == 0 {
			return errors.New("sitemaps: the sitemap step runs after the inject of the seeds; give seeds")
		}
		if err := sm.Validate(); err != nil {
			return fmt.Errorf("sitemap: %w", err)
		}
	}
	fetch, parse := o.Fetch, o.Parse
	fetch.Segment, parse.Segment = "segment", "segment"
	checks := []struct {
		job string
		err error
	}{
		{"generate", o.Generate.Validate()},
		{"fetch", fetch.Validate()},
		{"parse", parse.Validate()},
		{"updatedb", o.Update.Validate()},
	}
	if o.ClusterEvery > 0 {
		checks = append(checks, struct {
			job string
			err error
		}{"cluster", o.Cluster.Validate()})
	}
	if o.LinkDB || o.Update.Scoring == ScoringLinkRank {
		checks = append(checks, struct {
			job string
			err error
		}{"linkrank", o.LinkRank.Validate()})
		il := o.InvertLinks
		il.Segments = []string{"segment"}
		checks = append(checks, struct {
			job string
			err error
		}{"invertlinks", il.Validate()})
	}
	for _, c := range checks {
		if c.err != nil {
			return fmt.Errorf("%s: %w", c.job, c.err)
		}
	}
	return nil
}

// RoundResult reports one round.
type RoundResult struct {
	// Round is the round's number in the crawl directory (counting every
	// round any Crawl started there); Run its number in this Crawl.
	Round, Run int
	// Segment is the segment's URI and Name its base name.
	Segment, Name string
	// Time is the round's simulated time (zero: wall clock).
	Time time.Time
	// Resumed says the round was left half-done by an earlier run;
	// Stages lists the stages run now ("generate", "fetch", "parse",
	// "updatedb").
	Resumed bool
	Stages  []string
	// Generated is the size of the fetch list.
	Generated int64
	// The results of the stages run by this Crawl; nil for a stage not run
	// now (done by an earlier run, or not reached).
	Generate *GenerateResult
	Fetch    *FetchResult
	Parse    *ParseResult
	Update   *UpdateResult
	// Cluster is the clustering run after the round (CrawlOptions.ClusterEvery).
	Cluster *ClusterResult
	// InvertLinks is the LinkDB update run after the round
	// (CrawlOptions.LinkDB), and LinkRank the scoring run after it
	// (linkrank scoring).
	InvertLinks *InvertLinksResult
	LinkRank    *LinkRankResult
	// UpdateHostDb is the HostDb update run after the round
	// (CrawlOptions.HostDb).
	UpdateHostDb *UpdateHostDbResult
	// Duration is the round's wall time in this run.
	Duration time.Duration
	// Stopped says the round ended early at a StopFile; Interrupted that
	// an interrupt ended its fetch early (the fetched pages are kept); Err
	// is the error that ended it, if any.
	Stopped     bool
	Interrupted bool
	Err         error
}

// CrawlResult reports a Crawl run.
type CrawlResult struct {
	// Inject is the inject's result (nil without seeds).
	Inject *InjectResult
	// Sitemap is the sitemap step's result (nil without Sitemaps).
	Sitemap *SitemapResult
	// Rounds are the rounds run, in order.
	Rounds []RoundResult
	// Discarded lists the half-done segments removed because they could
	// not be resumed.
	Discarded []string
	// Stopped says a StopFile ended the crawl; Exhausted that generate
	// found nothing due.
	Stopped   bool
	Exhausted bool
	// CrawlDB is the CrawlDB directory's URI.
	CrawlDB string
	// Duration is the wall time of the whole run.
	Duration time.Duration
}

// crawlState is the content of CrawlStateFile.
type crawlState struct {
	// Round is the number of the last round started in this directory.
	Round int `json:"round"`
	// Segment is its segment's name.
	Segment string `json:"segment"`
	// Time is its simulated time; null in wall-clock mode.
	Time *time.Time `json:"time,omitempty"`
	// Started is the wall time it started.
	Started time.Time `json:"started"`
}

// errStopped ends a Crawl at a StopFile.
var errStopped = errors.New("stop file found")

// Crawl runs a whole crawl, as Nutch's bin/crawl script does: inject the
// seeds, then rounds of generate → fetch → parse → updatedb, each round a
// new segment, until Rounds rounds have run or generate finds nothing due.
//
// It is safe to run from cron. It holds the crawl lock (CrawlLockFile in
// the crawl directory; each job still takes the CrawlDB and segment locks
// itself) and fails at once with an error matching crawldb.ErrLocked if
// another crawl holds it; on a local disk a dead crawl's lock is free, and
// elsewhere Env.ForceLock breaks a lock whose holder died. It first repairs
// what a crash left in the CrawlDB (Recover: a merge installed but not
// marked is marked now), then finishes the rounds a crash, an interrupt or
// a stop left half-done: every segment with a published fetch list but no
// UpdatedMarker gets its missing stages (fetch unless crawl_fetch is
// published, parse unless crawl_parse is, then updatedb; each stage, under
// the segment's lock, removes what an interrupted run of it published in
// part and runs again). A fetch that an interrupt ended (ErrInterrupted)
// ends the Crawl with that error after the fetch is published; the next
// Crawl parses and merges what it fetched. Such a segment that is older than a segment already merged
// cannot be resumed (its URLs have been generated again since) and is
// removed. Between stages Crawl checks for StopFile: if present it
// removes it and returns with Stopped set, leaving the round for the next
// run.
//
// Simulated time: see CrawlOptions.Now. The round's time is generate's
// Now, fetch's Now (fetch times are that plus the time the fetch has run)
// and updatedb's Now, and SetClock gets it first.
func Crawl(ctx context.Context, env Env, o CrawlOptions) (res *CrawlResult, err error) {
	start := time.Now()
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	log := env.log().With("job", "crawl")
	o.estimateBudget()
	cp, err := env.paths()
	if err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	crawlPath := path.Dir(cp.dbPath)
	if err := cp.fs.MkdirAll(crawlPath); err != nil {
		return nil, fmt.Errorf("crawl: create %s: %w", cp.crawl, err)
	}
	lock, err := crawldb.LockWith(cp.fs, crawlPath, "crawl", env.ForceLock,
		crawldb.LockOptions{NoMaxAge: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("crawl: another crawl of %s is running or died: %w", cp.crawl, err)
	}
	defer env.unlock(lock, &err)

	c := &crawler{env: env, o: o, cp: cp, crawlPath: crawlPath, log: log,
		res: &CrawlResult{CrawlDB: cp.dbURI}}
	defer func() { c.res.Duration = time.Since(start) }()
	if err := c.readState(); err != nil {
		return nil, err
	}
	c.initClock()

	// Repair what a crash left in the CrawlDB (an install half done, the
	// markers of a merge that was installed) before judging the
	// segments: a segment whose merge was installed is marked merged
	// now, and so never merged twice.
	if err := Recover(env); err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	halfDone, err := c.halfDoneSegments()
	if err != nil {
		return nil, err
	}
	err = c.run(ctx, halfDone)
	if errors.Is(err, errStopped) {
		c.res.Stopped = true
		log.Info("crawl stopped at the stop file", "file", storage.Join(cp.crawl, StopFile))
		return c.res, nil
	}
	return c.res, err
}

// crawler is one Crawl run.
type crawler struct {
	env       Env
	o         CrawlOptions
	cp        crawlPaths
	crawlPath string
	log       *slog.Logger
	res       *CrawlResult
	state     crawlState

	simulated bool
	next      time.Time // the simulated time of the next new round
	runs      int       // rounds run by this Crawl
}

func (c *crawler) readState() error {
	data, err := storage.ReadFile(c.cp.fs, path.Join(c.crawlPath, CrawlStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("crawl: read %s: %w", CrawlStateFile, err)
	}
	if err := json.Unmarshal(data, &c.state); err != nil {
		return fmt.Errorf("crawl: %s: %w (remove it to start the round count and simulated clock afresh)",
			storage.Join(c.cp.crawl, CrawlStateFile), err)
	}
	return nil
}

func (c *crawler) writeState() error {
	data, err := json.MarshalIndent(c.state, "", "  ")
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	if err := storage.WriteFileAtomic(c.cp.fs, path.Join(c.crawlPath, CrawlStateFile), append(data, '\n')); err != nil {
		return fmt.Errorf("crawl: write %s: %w", CrawlStateFile, err)
	}
	return nil
}

// initClock decides whether the crawl runs on simulated time and when its
// first new round is.
func (c *crawler) initClock() {
	c.simulated = c.o.RoundInterval > 0 || !c.o.Now.IsZero() || !c.o.Start.IsZero()
	if !c.simulated {
		return
	}
	switch {
	case !c.o.Now.IsZero():
		c.next = c.o.Now.UTC()
	case c.state.Time != nil:
		c.next = c.state.Time.UTC().Add(c.o.RoundInterval)
	case !c.o.Start.IsZero():
		c.next = c.o.Start.UTC()
	default:
		c.next = time.Now().UTC().Truncate(time.Second)
	}
}

// takeTime returns the time of a new round and moves the clock on.
func (c *crawler) takeTime() time.Time {
	if !c.simulated {
		return time.Time{}
	}
	t := c.next
	c.next = c.next.Add(c.o.RoundInterval)
	return t
}

// segmentInfo is a segment directory and its state.
type segmentInfo struct {
	name, uri, path string
	state           segment.State
}

// inspect reads a segment's stage state.
func (c *crawler) inspect(name string) (segmentInfo, error) {
	si := segmentInfo{name: name, uri: storage.Join(c.cp.segURI, name), path: path.Join(c.cp.segPath, name)}
	st, err := segment.Inspect(c.cp.fs, si.path)
	if err != nil {
		return si, fmt.Errorf("crawl: %w", err)
	}
	si.state = st.State
	return si, nil
}

// halfDoneSegments lists the segments to resume, oldest first, and removes
// those that cannot be resumed.
func (c *crawler) halfDoneSegments() ([]segmentInfo, error) {
	infos, err := listSegments(c.cp)
	if err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}
	var half []segmentInfo
	newestMerged := ""
	for _, fi := range infos {
		if !fi.IsDir() {
			continue
		}
		if _, err := time.Parse(segmentNameLayout, fi.Name()); err != nil {
			continue
		}
		si, err := c.inspect(fi.Name())
		if err != nil {
			return nil, err
		}
		switch si.state {
		case segment.StateMerged:
			newestMerged = max(newestMerged, fi.Name())
		case segment.StateIncomplete:
			// No published fetch list: what a killed generate left;
			// generate removes it under the CrawlDB lock.
		default:
			half = append(half, si)
		}
	}
	slices.SortFunc(half, func(a, b segmentInfo) int { return strings.Compare(a.name, b.name) })
	var out []segmentInfo
	for _, si := range half {
		if si.name < newestMerged {
			c.log.Warn("discarding a half-done segment older than a merged one: its URLs were generated again since",
				"segment", si.name, "merged", newestMerged)
			if err := c.cp.fs.RemoveAll(si.path); err != nil {
				return nil, fmt.Errorf("crawl: discard segment %s: %w", si.name, err)
			}
			c.res.Discarded = append(c.res.Discarded, si.uri)
			continue
		}
		out = append(out, si)
	}
	return out, nil
}

// stop returns errStopped, removing the stop file, if it exists.
func (c *crawler) stop() error {
	p := path.Join(c.crawlPath, StopFile)
	ok, err := storage.Exists(c.cp.fs, p)
	if err != nil {
		return fmt.Errorf("crawl: check %s: %w", StopFile, err)
	}
	if !ok {
		return nil
	}
	if err := c.cp.fs.RemoveAll(p); err != nil {
		return fmt.Errorf("crawl: remove %s: %w", StopFile, err)
	}
	return errStopped
}

// more reports whether another round may start.
func (c *crawler) more() bool { return c.o.Rounds < 0 || c.runs < c.o.Rounds }

func (c *crawler) run(ctx context.Context, halfDone []segmentInfo) error {
	if len(c.o.Seeds) > 0 {
		if err := c.stop(); err != nil {
			return err
		}
		in := c.o.Inject
		in.Seeds = c.o.Seeds
		in.Now = time.Time{}
		if c.simulated {
			in.Now = c.next
			if len(halfDone) > 0 && halfDone[0].name == c.state.Segment && c.state.Time != nil {
				in.Now = *c.state.Time
			}
		}
		r, err := Inject(ctx, c.env, in)
		if err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		c.res.Inject = r
		if c.o.Sitemaps {
			sm := c.o.Sitemap
			sm.FromRobots, sm.Now = true, in.Now
			r, err := Sitemap(ctx, c.env, sm)
			if err != nil {
				return fmt.Errorf("crawl: %w", err)
			}
			c.res.Sitemap = r
		}
	}
	for _, si := range halfDone {
		if !c.more() {
			c.log.Info("half-done segment left for the next crawl: no rounds left", "segment", si.uri)
			continue
		}
		t := time.Time{}
		switch {
		case si.name == c.state.Segment && c.state.Time != nil && c.simulated:
			t = c.state.Time.UTC()
		case si.name == c.state.Segment && !c.simulated:
		default:
			t = c.takeTime()
		}
		rr := RoundResult{Round: c.state.Round, Segment: si.uri, Name: si.name, Time: t, Resumed: true}
		if si.name != c.state.Segment {
			c.state.Round++
			rr.Round = c.state.Round
			if err := c.startRound(si.name, t); err != nil {
				return err
			}
		}
		c.log.Info("resuming a half-done round", "segment", si.uri, "state", si.state)
		if err := c.round(ctx, &rr, si); err != nil {
			return err
		}
	}
	for c.more() {
		t := c.takeTime()
		rr := RoundResult{Round: c.state.Round + 1, Time: t}
		if err := c.newRound(ctx, &rr); err != nil {
			if errors.Is(err, ErrNothingDue) {
				c.res.Exhausted = true
				c.log.Info("nothing due: the crawl is done for now", "time", t)
				return nil
			}
			return err
		}
	}
	return nil
}

// startRound records a round in CrawlStateFile.
func (c *crawler) startRound(name string, t time.Time) error {
	c.state.Segment = name
	c.state.Started = time.Now().UTC()
	c.state.Time = nil
	if c.simulated {
		tt := t.UTC()
		c.state.Time = &tt
	}
	return c.writeState()
}

// setClock moves the simulated clock to the round's time.
func (c *crawler) setClock(ctx context.Context, t time.Time) error {
	if c.o.SetClock == nil || t.IsZero() {
		return nil
	}
	if err := c.o.SetClock(ctx, t); err != nil {
		return fmt.Errorf("crawl: set the clock to %s: %w", t.Format(time.RFC3339), err)
	}
	return nil
}

// newRound generates a segment and runs its stages.
func (c *crawler) newRound(ctx context.Context, rr *RoundResult) (err error) {
	start := time.Now()
	if err := c.stop(); err != nil {
		return err
	}
	if err := c.setClock(ctx, rr.Time); err != nil {
		return err
	}
	g := c.o.Generate
	g.Now = rr.Time
	gr, err := Generate(ctx, c.env, g)
	if err != nil {
		if errors.Is(err, ErrNothingDue) {
			return err
		}
		return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
	}
	c.state.Round++
	rr.Round = c.state.Round
	rr.Segment, rr.Name, rr.Generate, rr.Generated = gr.Segment, gr.Name, gr, gr.Selected
	rr.Stages = append(rr.Stages, "generate")
	if err := c.startRound(gr.Name, rr.Time); err != nil {
		return err
	}
	si, err := c.inspect(gr.Name)
	if err != nil {
		return err
	}
	return c.stages(ctx, rr, si, start)
}

// round resumes a half-done segment.
func (c *crawler) round(ctx context.Context, rr *RoundResult, si segmentInfo) error {
	start := time.Now()
	n, err := countRows(c.cp.fs, path.Join(si.path, segment.DirGenerate))
	if err != nil {
		return fmt.Errorf("crawl: segment %s: %w", si.uri, err)
	}
	rr.Generated = n
	if err := c.setClock(ctx, rr.Time); err != nil {
		return err
	}
	return c.stages(ctx, rr, si, start)
}

// stages runs the missing fetch, parse and updatedb stages of a segment.
func (c *crawler) stages(ctx context.Context, rr *RoundResult, si segmentInfo, start time.Time) (err error) {
	c.runs++
	rr.Run = c.runs
	defer func() {
		rr.Duration = time.Since(start)
		switch {
		case errors.Is(err, errStopped):
			rr.Stopped = true
		case errors.Is(err, ErrInterrupted):
			rr.Interrupted = true
		default:
			rr.Err = err
		}
		c.res.Rounds = append(c.res.Rounds, *rr)
		if c.o.OnRound != nil {
			c.o.OnRound(*rr)
		}
	}()
	if si.state < segment.StateFetched {
		if err := c.stop(); err != nil {
			return err
		}
		f := c.o.Fetch
		f.Segment, f.Now, f.Parse = si.uri, rr.Time, nil
		if !c.o.ParseJob {
			p := c.o.Parse
			f.Parse = &p
		}
		fr, err := Fetch(ctx, c.env, f)
		rr.Fetch = fr
		if fr != nil && fr.Parse != nil {
			rr.Parse = fr.Parse
		}
		if errors.Is(err, ErrInterrupted) {
			// The fetched pages are published: the next crawl parses
			// and merges them before it generates anything new.
			rr.Stages = append(rr.Stages, "fetch")
			return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
		}
		if err != nil {
			return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
		}
		rr.Stages = append(rr.Stages, "fetch")
		if fr.Parse != nil {
			rr.Stages = append(rr.Stages, "parse")
			si.state = segment.StateParsed
		}
	}
	if si.state < segment.StateParsed {
		if err := c.stop(); err != nil {
			return err
		}
		p := c.o.Parse
		p.Segment = si.uri
		pr, err := Parse(ctx, c.env, p)
		if err != nil {
			return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
		}
		rr.Parse = pr
		rr.Stages = append(rr.Stages, "parse")
	}
	if err := c.stop(); err != nil {
		return err
	}
	u := c.o.Update
	u.Segments, u.Now = []string{si.uri}, rr.Time
	ur, err := UpdateDB(ctx, c.env, u)
	if err != nil {
		return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
	}
	rr.Update = ur
	rr.Stages = append(rr.Stages, "updatedb")
	return c.afterUpdate(ctx, rr)
}

// afterUpdate runs what follows a round's updatedb: invertlinks (with the
// LinkDB kept or linkrank scoring), linkrank, and the clustering of every
// ClusterEvery-th round.
func (c *crawler) afterUpdate(ctx context.Context, rr *RoundResult) error {
	if c.o.LinkDB || c.o.Update.Scoring == ScoringLinkRank {
		if err := c.invertLinks(ctx, rr); err != nil {
			return err
		}
	}
	if c.o.Update.Scoring == ScoringLinkRank {
		if err := c.stop(); err != nil {
			return err
		}
		lo := c.o.LinkRank
		lo.WarmStart = true // from the previous round's ranks
		lr, err := LinkRank(ctx, c.env, lo)
		if err != nil {
			return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
		}
		rr.LinkRank = lr
		rr.Stages = append(rr.Stages, "linkrank")
	}
	if c.o.HostDb {
		if err := c.stop(); err != nil {
			return err
		}
		hr, err := UpdateHostDb(ctx, c.env, UpdateHostDbOptions{Segments: []string{rr.Segment}})
		if err != nil {
			return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
		}
		rr.UpdateHostDb = hr
		rr.Stages = append(rr.Stages, "updatehostdb")
	}
	if c.o.ClusterEvery > 0 && rr.Round%c.o.ClusterEvery == 0 {
		if err := c.stop(); err != nil {
			return err
		}
		co := c.o.Cluster
		co.Now = rr.Time
		cr, err := Cluster(ctx, c.env, co)
		if err != nil {
			return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
		}
		rr.Cluster = cr
		rr.Stages = append(rr.Stages, "cluster")
	}
	return nil
}

// invertLinks adds the links of every parsed segment not yet inverted to
// the LinkDB.
func (c *crawler) invertLinks(ctx context.Context, rr *RoundResult) error {
	if err := c.stop(); err != nil {
		return err
	}
	segs, err := ParsedSegments(c.env, true)
	if err != nil {
		return fmt.Errorf("crawl: round %d: invertlinks: %w", rr.Round, err)
	}
	if len(segs) == 0 {
		return nil
	}
	o := c.o.InvertLinks
	o.Segments = segs
	lr, err := InvertLinks(ctx, c.env, o)
	if err != nil {
		return fmt.Errorf("crawl: round %d: %w", rr.Round, err)
	}
	rr.InvertLinks = lr
	rr.Stages = append(rr.Stages, "invertlinks")
	return nil
}

// countRows counts the rows of a published job output of CrawlDB rows (a
// fetch list, a CrawlDB version) from the Parquet footers.
func countRows(fsys storage.FS, dir string) (int64, error) {
	infos, err := fsys.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, fi := range infos {
		name := fi.Name()
		if !parquetio.IsPart(fi) {
			continue
		}
		p := path.Join(dir, name)
		f, err := fsys.Open(p)
		if err != nil {
			return 0, err
		}
		r, err := parquetio.Open[segment.Generate](f, p, parquetio.AllowMissingColumns())
		if err != nil {
			f.Close()
			return 0, err
		}
		n += r.NumRows()
		if err := r.Close(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// Summary renders the round as a few lines for a terminal: what was
// generated, fetched, parsed and added, the fetch rate and the durations.
func (r RoundResult) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "round %d", r.Round)
	if r.Run > 0 {
		fmt.Fprintf(&b, " (run %d)", r.Run)
	}
	fmt.Fprintf(&b, "  segment %s", r.Name)
	if !r.Time.IsZero() {
		fmt.Fprintf(&b, "  at %s", r.Time.UTC().Format(time.RFC3339))
	}
	if r.Resumed {
		b.WriteString("  (resumed)")
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "  generated  %d URLs", r.Generated)
	if r.Generate != nil {
		fmt.Fprintf(&b, " on %d hosts (due %d)", r.Generate.Hosts, r.Generate.Due)
		if g := r.Generate; g.HostDbHosts > 0 {
			fmt.Fprintf(&b, "; HostDb %s skipped %d hosts: %d URLs for their failure streak, %d for failed DNS",
				g.HostDbVersion, g.HostDbHosts, g.HostDbFailing, g.HostDbDNSFailed)
		}
	}
	b.WriteByte('\n')
	if f := r.Fetch; f != nil {
		fmt.Fprintf(&b, "  fetched    %d ok, %d failed (%d gone, %d to retry), %d robots denied, %d not modified, %d redirects, %d left for a later round",
			f.Fetched, f.Failed, f.Gone, f.Retry, f.RobotsDenied, f.NotModified, f.Redirects, f.Unfetched)
		if f.Refused > 0 {
			fmt.Fprintf(&b, ", %d refused by policy (private addresses need --allow-private)", f.Refused)
		}
		b.WriteByte('\n')
		fmt.Fprintf(&b, "  rate       %.1f pages/s, %s in %s\n", f.PagesPerSecond, byteSize(f.Bytes), f.Duration.Round(time.Millisecond))
	} else if r.Resumed {
		b.WriteString("  fetched    by an earlier run\n")
	}
	if p := r.Parse; p != nil {
		fmt.Fprintf(&b, "  parsed     %d pages, %d failed, %d outlinks, in %s\n", p.Parsed, p.Failed, p.Outlinks, p.Duration.Round(time.Millisecond))
	}
	if u := r.Update; u != nil {
		fmt.Fprintf(&b, "  new URLs   %d; the CrawlDB has %d URLs", u.Added, u.Rows)
		fetched, notModified := u.StatusCounts[crawldb.StatusDBFetched.String()], u.StatusCounts[crawldb.StatusDBNotModified.String()]
		if fetched > 0 || notModified > 0 {
			fmt.Fprintf(&b, ", %d fetched", fetched)
		}
		if notModified > 0 {
			fmt.Fprintf(&b, ", %d not modified", notModified)
		}
		b.WriteByte('\n')
	}
	if h := r.UpdateHostDb; h != nil {
		fmt.Fprintf(&b, "  hostdb     %d hosts, %d with a failure streak (version %s)\n", h.Hosts, h.Failing, h.Version)
	}
	if cl := r.Cluster; cl != nil {
		fmt.Fprintf(&b, "  clustered  %d young pages into %d clusters (%d noise), %d samples: %s\n",
			cl.Params.Points, cl.Params.Clusters, cl.Params.Noise, cl.Samples, cl.Name)
	}
	fmt.Fprintf(&b, "  duration   %s", r.Duration.Round(time.Millisecond))
	switch {
	case r.Err != nil:
		fmt.Fprintf(&b, "  FAILED: %v", r.Err)
	case r.Stopped:
		b.WriteString("  stopped at the stop file; the next crawl resumes this round")
	case r.Interrupted:
		b.WriteString("  interrupted: the pages fetched are kept; the next crawl parses and merges them")
	}
	b.WriteByte('\n')
	return b.String()
}

// byteSize formats n bytes for people.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// estimateBudget gives the estimating schedule, when it has no budget of
// its own (schedule.estimate.fetchesPerDay 0), the crawl's: topN fetches
// every RoundInterval, when both are set.
func (o *CrawlOptions) estimateBudget() {
	if o.RoundInterval <= 0 || o.Generate.TopN <= 0 {
		return
	}
	perDay := float64(o.Generate.TopN) / (o.RoundInterval.Hours() / 24)
	for _, s := range []*ScheduleOptions{&o.Generate.Schedule, &o.Update.Schedule} {
		if s.Name == "estimate" && s.Config.Estimate.FetchesPerDay == 0 {
			*s = s.resolved()
			s.Config.Estimate.FetchesPerDay = perDay
		}
	}
}
