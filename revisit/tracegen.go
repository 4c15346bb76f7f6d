package revisit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/simweb"
)

// TraceModel names a generator of synthetic change histories.
//
// Every model builds the same kind of site: Hosts hosts named
// h0001.trace.test, h0002.trace.test, ... (loopback-style names under the
// reserved .test domain), each with a home page "/", directories ending in
// "/" (about 10% of a host's other pages, a quarter of them one level
// deeper), HTML leaves ending in ".html" (about 82%) and PDF documents
// (about 8%). Host sizes vary (log-normal weights, σ = 0.7). Features are
// drawn per kind (log-normal words with medians 250 home, 120 directory,
// 450 leaf, 2500 PDF; outlinks 45, 35, 15, 2; inlinks 60, 20, 3, 2; images
// about one per 120 words of HTML, one per 800 words of PDF; bytes from
// words, links and images with noise; depth is the URL's path depth). The
// sites and features depend on the seed, the pages and the hosts only:
// every model and every period length gives the same pages, with other
// changes.
//
// A page's pattern is drawn through a Gaussian copula whose latent
// variable is 0.45·s + 0.3·h + noise, where s is the page's standardized
// score of its words and outlinks draws (its inlinks draw carries half of
// s too) and h a per-host effect: each page falls in a pattern with the
// probabilities of the share tables below, but bigger, link-rich pages on
// busy hosts fall more often in the earlier (more active) columns; within
// a Poisson class the rate is nudged up by s too. Features thus predict a
// page's pattern and rate, but only loosely.
//
// Static pages never change. Each single model (poisson, timetable,
// bursty, quiet) makes a page static with the share of its kind (home 2%,
// directory 8%, leaf 20%, PDF 65%) and gives every other page its pattern.
//
// Rate is each page's expected number of changes in the period divided by
// Days, under the page's own parameters (its timetable, burst parameters
// or switch time): the long-run mean rate over the period a mean-rate
// oracle would know. For Poisson pages it is the process's rate.
//
// Results (`trawl eval revisit --trace-model M --pages 20000 --days 60`,
// seed 1, 10% budget, baselines tuned), mean freshness of adaptive,
// estimate and oracle:
//
//	poisson    0.6703  0.6792  0.7055
//	timetable  0.3110  0.3248  0.3279
//	bursty     0.5872  0.5923  0.5375
//	quiet      0.6300  0.6317  0.6163
//	mixed      0.6167  0.6252  0.6260
//
// The oracle allocates by mean rates, which is optimal only for Poisson
// pages: on bursty pages (a change is soon followed by more, then by a
// long quiet spell) and on pages that die or wake it spends fetches where
// the mean says changes are, not where they are, and the estimate policy
// and even adaptive beat it.
type TraceModel string

// The trace models. Their parameters are the generator's specification.
const (
	// TracePoisson: homogeneous Poisson processes whose rates come from a
	// mixture of five classes with medians 8/day (fast), 1.2/day (daily),
	// 1/7 days (weekly), 1/30 days (monthly) and 1/365 days (yearly),
	// log10-normal within a class (σ = 0.25 decades, clamped to
	// [1e-4, 48] per day). Class shares by kind (fast, daily, weekly,
	// monthly, yearly): home 30/40/20/8/2%, directory 10/35/30/15/10%,
	// leaf 3/17/25/25/30%, PDF 0/2/8/25/65%.
	TracePoisson TraceModel = "poisson"
	// TraceTimetable: changes at fixed times of day on a weekly
	// timetable, one of: twice a day on weekdays at 06:00 and 18:00
	// (share 30%), nightly at one hour in 00:00-05:00 every day (30%),
	// four times a day at 00:00, 06:00, 12:00, 18:00 (10%), hourly in
	// business hours 09:00-17:00 on weekdays (10%), weekly on one day at
	// 09:00 (20%). Each host draws one timetable and a minute offset (a
	// multiple of 5 in [0, 55]) added to every slot; a page takes its
	// host's timetable with probability 0.6, else draws its own (with the
	// host's offset). Each change is jittered around its slot (normal,
	// σ = 3 minutes, clamped to ±10 minutes), and each slot is skipped
	// with the page's skip probability, uniform in [0.02, 0.10]. Times of
	// day are UTC.
	TraceTimetable TraceModel = "timetable"
	// TraceBursty: quiet spells broken by bursts (an on/off
	// Markov-modulated process). Quiet spells are exponential with a
	// per-page mean log-uniform in [2, 21] days; a burst has 2 +
	// Poisson(b−2) changes, b uniform in [3, 8], spaced by exponential
	// gaps with a per-page mean log-uniform in [15, 120] minutes. The
	// period starts in a quiet spell (its memoryless residual).
	TraceBursty TraceModel = "bursty"
	// TraceQuiet: pages that die or wake, half each. A dying page changes
	// as a Poisson process (rate log10-normal, median 0.7/day, σ = 0.3
	// decades) from the start until its switch time and never after; a
	// waking page is quiet until its switch time and changes so after.
	// The switch time is uniform in [25%, 75%] of the period, so each
	// such page has a quiet spell of at least a quarter of the period.
	TraceQuiet TraceModel = "quiet"
	// TraceMixed mixes the patterns with these shares by kind (timetable,
	// Poisson, bursty, quiet, static): home 40/30/15/10/5%, directory
	// 25/35/20/10/10%, leaf 8/35/22/10/25%, PDF 2/15/5/8/70%. Each
	// non-static page then follows its pattern's model above (a Poisson
	// page takes the Poisson class mixture).
	TraceMixed TraceModel = "mixed"
)

// TraceModelNames lists the trace models GenerateTrace knows.
func TraceModelNames() []string {
	return []string{string(TracePoisson), string(TraceTimetable), string(TraceBursty), string(TraceQuiet), string(TraceMixed)}
}

// TraceGenConfig configures GenerateTrace.
type TraceGenConfig struct {
	// Model is the trace model (empty means TraceMixed).
	Model TraceModel
	// Pages is the number of pages (at least 1); Hosts the number of
	// hosts (0 means Pages/100, at least 1; at most Pages).
	Pages, Hosts int
	// Start is the start of the period (zero means simweb's epoch,
	// 2026-01-01T00:00:00Z); Days its length in days (at least 1).
	Start time.Time
	Days  int
	// Seed selects the trace: the same configuration always generates the
	// same trace.
	Seed uint64
}

// GenerateTrace generates a synthetic change history of cfg.Pages pages
// over cfg.Days days from cfg.Start, following cfg.Model (see TraceModel).
// Each page's changes are sorted, at millisecond precision, in
// (Start, Start+Days days].
func GenerateTrace(cfg TraceGenConfig) ([]TracePage, error) {
	pages, _, err := generateTrace(cfg)
	return pages, err
}

// Page kinds and patterns of the generator.
const (
	genHome = iota
	genDir
	genLeaf
	genPDF
	genKinds
)

// Patterns, in the copula's order (the more active first).
const (
	patTimetable = iota
	patPoisson
	patBursty
	patQuiet
	patStatic
	numPatterns
)

// mixedShares[kind] are TraceMixed's pattern shares.
var mixedShares = [genKinds][numPatterns]float64{
	genHome: {0.40, 0.30, 0.15, 0.10, 0.05},
	genDir:  {0.25, 0.35, 0.20, 0.10, 0.10},
	genLeaf: {0.08, 0.35, 0.22, 0.10, 0.25},
	genPDF:  {0.02, 0.15, 0.05, 0.08, 0.70},
}

// staticShare[kind] is the static share of the single models.
var staticShare = [genKinds]float64{0.02, 0.08, 0.20, 0.65}

// poissonClasses[kind] are the Poisson class shares; poissonMedian the
// classes' median rates per day.
var (
	poissonClasses = [genKinds][5]float64{
		genHome: {0.30, 0.40, 0.20, 0.08, 0.02},
		genDir:  {0.10, 0.35, 0.30, 0.15, 0.10},
		genLeaf: {0.03, 0.17, 0.25, 0.25, 0.30},
		genPDF:  {0, 0.02, 0.08, 0.25, 0.65},
	}
	poissonMedian = [5]float64{8, 1.2, 1.0 / 7, 1.0 / 30, 1.0 / 365}
)

// Generator constants (see TraceModel).
const (
	copulaRho      = 0.45
	copulaTau      = 0.3
	poissonSigma   = 0.25 // decades
	minTraceRate   = 1e-4
	maxTraceRate   = 48.0
	slotJitter     = 3 * time.Minute
	maxSlotJitter  = 10 * time.Minute
	hostTimetableP = 0.6
	quietMedian    = 0.7 // per day
	quietSigma     = 0.3 // decades
)

// timetable is a weekly timetable: the days of the week (bit d for
// time.Weekday d) and the times of day (offsets from midnight UTC) of its
// slots.
type timetable struct {
	days  uint8
	times []time.Duration
}

// timetableShares are the shares of drawTimetable's timetables.
var timetableShares = []float64{0.30, 0.30, 0.10, 0.10, 0.20}

const weekdays = 1<<time.Monday | 1<<time.Tuesday | 1<<time.Wednesday | 1<<time.Thursday | 1<<time.Friday

// drawTimetable draws a timetable with the given minute offset.
func drawTimetable(r *rand.Rand, offset time.Duration) timetable {
	var tt timetable
	switch pick(r.Float64(), timetableShares) {
	case 0:
		tt = timetable{weekdays, []time.Duration{6 * time.Hour, 18 * time.Hour}}
	case 1:
		tt = timetable{0x7f, []time.Duration{time.Duration(r.IntN(6)) * time.Hour}}
	case 2:
		tt = timetable{0x7f, []time.Duration{0, 6 * time.Hour, 12 * time.Hour, 18 * time.Hour}}
	case 3:
		tt.days = weekdays
		for h := 9; h <= 17; h++ {
			tt.times = append(tt.times, time.Duration(h)*time.Hour)
		}
	default:
		tt = timetable{1 << r.IntN(7), []time.Duration{9 * time.Hour}}
	}
	for i := range tt.times {
		tt.times[i] += offset
	}
	return tt
}

// slots returns the timetable's slot instants in (start, end].
func (tt timetable) slots(start, end time.Time) []time.Time {
	var out []time.Time
	for day := start.UTC().Truncate(24 * time.Hour); !day.After(end); day = day.Add(24 * time.Hour) {
		if tt.days&(1<<day.Weekday()) == 0 {
			continue
		}
		for _, d := range tt.times {
			if t := day.Add(d); t.After(start) && !t.After(end) {
				out = append(out, t)
			}
		}
	}
	return out
}

// genPattern is what the generator drew for one page (the tests check the
// changes against it).
type genPattern struct {
	kind    int
	pattern int
	// timetable pages: the timetable and skip probability.
	tt   timetable
	skip float64
	// quiet pages: whether the page wakes (else dies) and when.
	wakes    bool
	switchAt time.Time
}

// generateTrace generates the trace and each page's pattern.
func generateTrace(cfg TraceGenConfig) ([]TracePage, []genPattern, error) {
	if cfg.Model == "" {
		cfg.Model = TraceMixed
	}
	if !slices.Contains(TraceModelNames(), string(cfg.Model)) {
		return nil, nil, fmt.Errorf("revisit: trace model %q: want one of %s", cfg.Model, strings.Join(TraceModelNames(), ", "))
	}
	if cfg.Pages < 1 {
		return nil, nil, fmt.Errorf("revisit: trace of %d pages: want at least 1", cfg.Pages)
	}
	if cfg.Days < 1 {
		return nil, nil, fmt.Errorf("revisit: trace of %d days: want at least 1", cfg.Days)
	}
	if cfg.Hosts < 0 {
		return nil, nil, errors.New("revisit: trace hosts: want at least 0 (0: pages/100)")
	}
	if cfg.Hosts == 0 {
		cfg.Hosts = max(1, cfg.Pages/100)
	}
	cfg.Hosts = min(cfg.Hosts, cfg.Pages)
	if cfg.Start.IsZero() {
		cfg.Start = simweb.DefaultEpoch()
	}
	start := cfg.Start.UTC().Truncate(time.Millisecond)
	end := start.Add(time.Duration(cfg.Days) * 24 * time.Hour)

	// Hosts: sizes, effects, timetables.
	hr := rand.New(rand.NewPCG(cfg.Seed, 0x7472616365686f73))
	weights := make([]float64, cfg.Hosts)
	var sum float64
	for i := range weights {
		weights[i] = math.Exp(0.7 * hr.NormFloat64())
		sum += weights[i]
	}
	sizes := make([]int, cfg.Hosts)
	left := cfg.Pages - cfg.Hosts // every host has its home page
	for i := range sizes {
		sizes[i] = 1 + int(float64(left)*weights[i]/sum)
	}
	for i, n := 0, cfg.Pages-sumInts(sizes); i < n; i++ {
		sizes[i%cfg.Hosts]++
	}
	type host struct {
		name   string
		effect float64
		offset time.Duration
		tt     timetable
	}
	width := max(4, len(strconv.Itoa(cfg.Hosts)))
	hosts := make([]host, cfg.Hosts)
	for i := range hosts {
		h := &hosts[i]
		h.name = fmt.Sprintf("h%0*d.trace.test", width, i+1)
		h.effect = hr.NormFloat64()
		h.offset = time.Duration(5*hr.IntN(12)) * time.Minute
		h.tt = drawTimetable(hr, h.offset)
	}

	single := map[TraceModel]int{TracePoisson: patPoisson, TraceTimetable: patTimetable, TraceBursty: patBursty,
		TraceQuiet: patQuiet}[cfg.Model] // the pattern of a single model's non-static pages
	pages := make([]TracePage, 0, cfg.Pages)
	pats := make([]genPattern, 0, cfg.Pages)
	id := 0
	for hi, h := range hosts {
		var dirs []string // the host's directory paths
		for k := 0; k < sizes[hi]; k++ {
			r := rand.New(rand.NewPCG(cfg.Seed, uint64(id)<<1|1))
			id++
			kind, path := genHome, "/"
			if k > 0 {
				switch u := r.Float64(); {
				case u < 0.10 || len(dirs) == 0 && u < 0.5:
					kind = genDir
					name := dirWords[len(dirs)%len(dirWords)]
					if n := len(dirs) / len(dirWords); n > 0 {
						name += strconv.Itoa(n)
					}
					if len(dirs) > 0 && r.Float64() < 0.25 {
						path = dirs[r.IntN(len(dirs))] + name + "/"
					} else {
						path = "/" + name + "/"
					}
					dirs = append(dirs, path)
				case u < 0.18:
					kind = genPDF
					path = parentDir(r, dirs) + leafWords[r.IntN(len(leafWords))] + "-" + strconv.Itoa(k) + ".pdf"
				default:
					kind = genLeaf
					path = parentDir(r, dirs) + leafWords[r.IntN(len(leafWords))] + "-" + strconv.Itoa(k) + ".html"
				}
			}
			feat, s := drawFeatures(r, kind, path, sizes[hi])
			latent := copulaRho*s + copulaTau*h.effect + math.Sqrt(1-copulaRho*copulaRho-copulaTau*copulaTau)*r.NormFloat64()
			u := 0.5 * math.Erfc(latent/math.Sqrt2) // 1 − Φ(latent): a high latent picks an early column
			pat := genPattern{kind: kind, pattern: patStatic}
			switch {
			case cfg.Model == TraceMixed:
				pat.pattern = pick(u, mixedShares[kind][:])
			case u < 1-staticShare[kind]:
				pat.pattern = single
			}
			tp := TracePage{URL: "http://" + h.name + path, Features: feat}
			days := float64(cfg.Days)
			switch pat.pattern {
			case patPoisson:
				c := pick(r.Float64(), poissonClasses[kind][:])
				lg := math.Log10(poissonMedian[c]) + poissonSigma*(0.5*s+math.Sqrt(0.75)*r.NormFloat64())
				rate := min(max(math.Pow(10, lg), minTraceRate), maxTraceRate)
				tp.Changes = poissonChanges(r, start, start, end, rate)
				tp.Rate = rate
			case patTimetable:
				pat.tt = h.tt
				if r.Float64() >= hostTimetableP {
					pat.tt = drawTimetable(r, h.offset)
				}
				pat.skip = 0.02 + 0.08*r.Float64()
				slots := pat.tt.slots(start, end)
				for _, t := range slots {
					if r.Float64() < pat.skip {
						continue
					}
					j := time.Duration(r.NormFloat64() * float64(slotJitter))
					j = min(max(j, -maxSlotJitter), maxSlotJitter)
					if t = t.Add(j).Truncate(time.Millisecond); t.After(start) && !t.After(end) {
						tp.Changes = append(tp.Changes, t)
					}
				}
				slices.SortFunc(tp.Changes, func(a, b time.Time) int { return a.Compare(b) })
				tp.Rate = float64(len(slots)) * (1 - pat.skip) / days
			case patBursty:
				quiet := 2 * math.Pow(21.0/2, r.Float64())              // days
				gap := 15 * math.Pow(120.0/15, r.Float64()) / (24 * 60) // days
				size := 3 + 5*r.Float64()                               // mean changes per burst
				t := start.Add(daysDuration(quiet * r.ExpFloat64()))    // the first burst
				for t.Before(end) {
					n := 2 + poissonCount(r, size-2)
					for i := 0; i < n; i++ {
						if i > 0 {
							t = t.Add(daysDuration(gap * r.ExpFloat64()))
						}
						if tm := t.Truncate(time.Millisecond); tm.After(start) && !tm.After(end) {
							tp.Changes = append(tp.Changes, tm)
						}
					}
					t = t.Add(daysDuration(quiet * r.ExpFloat64()))
				}
				tp.Rate = size / (quiet + (size-1)*gap)
			case patQuiet:
				rate := min(max(math.Pow(10, math.Log10(quietMedian)+quietSigma*r.NormFloat64()), minTraceRate), maxTraceRate)
				pat.wakes = r.IntN(2) == 0
				frac := 0.25 + 0.5*r.Float64()
				pat.switchAt = start.Add(daysDuration(frac * days)).Truncate(time.Millisecond)
				if pat.wakes {
					tp.Changes = poissonChanges(r, start, pat.switchAt, end, rate)
					tp.Rate = rate * (1 - frac)
				} else {
					tp.Changes = poissonChanges(r, start, start, pat.switchAt, rate)
					tp.Rate = rate * frac
				}
			}
			pages = append(pages, tp)
			pats = append(pats, pat)
		}
	}
	return pages, pats, nil
}

// poissonChanges draws a Poisson process of rate (per day) in (from, to],
// keeping the times in (start, to] at millisecond precision.
func poissonChanges(r *rand.Rand, start, from, to time.Time, rate float64) []time.Time {
	var out []time.Time
	if rate <= 0 {
		return nil
	}
	for t := from; ; {
		t = t.Add(daysDuration(r.ExpFloat64() / rate))
		if t.After(to) {
			return out
		}
		if tm := t.Truncate(time.Millisecond); tm.After(start) {
			out = append(out, tm)
		}
	}
}

// daysDuration converts days to a Duration.
func daysDuration(d float64) time.Duration {
	return time.Duration(d * 24 * float64(time.Hour))
}

// pick returns the index of the share u falls in (the last if beyond).
func pick(u float64, shares []float64) int {
	cum := 0.0
	for i, p := range shares {
		cum += p
		if u < cum {
			return i
		}
	}
	return len(shares) - 1
}

// poissonCount draws a Poisson count of the given mean.
func poissonCount(r *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	if mean > 30 {
		return max(0, int(math.Round(mean+math.Sqrt(mean)*r.NormFloat64())))
	}
	l, k, p := math.Exp(-mean), 0, r.Float64()
	for p > l {
		k++
		p *= r.Float64()
	}
	return k
}

func sumInts(v []int) int {
	n := 0
	for _, x := range v {
		n += x
	}
	return n
}

var (
	dirWords  = []string{"news", "products", "blog", "docs", "about", "events", "support", "catalog", "people", "research", "press", "jobs"}
	leafWords = []string{"report", "item", "post", "article", "notice", "guide", "review", "update", "story", "spec", "faq", "offer"}
)

// parentDir picks the directory of a leaf: the root (a fifth of leaves)
// or one of the host's directories.
func parentDir(r *rand.Rand, dirs []string) string {
	if len(dirs) == 0 || r.Float64() < 0.2 {
		return "/"
	}
	return dirs[r.IntN(len(dirs))]
}

// Feature medians by kind: words, outlinks, inlinks.
var (
	medianWords    = [genKinds]float64{250, 120, 450, 2500}
	medianOutlinks = [genKinds]float64{45, 35, 15, 2}
	medianInlinks  = [genKinds]float64{60, 20, 3, 2}
)

// drawFeatures draws the features of a page of kind at path on a host of
// hostPages pages, and its standardized score s of the words and
// outlinks draws.
func drawFeatures(r *rand.Rand, kind int, path string, hostPages int) (crawldb.Features, float64) {
	zw, zo := r.NormFloat64(), r.NormFloat64()
	s := (zw + zo) / math.Sqrt2
	zi := 0.5*s + math.Sqrt(0.75)*r.NormFloat64()
	words := math.Round(medianWords[kind] * math.Exp(0.6*zw))
	out := math.Round(medianOutlinks[kind] * math.Exp(0.6*zo))
	in := math.Round(medianInlinks[kind] * math.Exp(0.9*zi))
	if kind == genHome || kind == genDir {
		in = min(in, float64(hostPages)*3) // a small host has few links to give
	}
	perImage := 120.0
	if kind == genPDF {
		perImage = 800
	}
	images := poissonCount(r, words/perImage)
	var bytes float64
	if kind == genPDF {
		bytes = (words*25 + float64(images)*40000) * math.Exp(0.3*r.NormFloat64())
	} else {
		bytes = (3000 + words*7 + out*70 + float64(images)*120) * math.Exp(0.2*r.NormFloat64())
	}
	depth := 0
	for i := 1; i < len(path); i++ {
		if path[i-1] == '/' {
			depth++
		}
	}
	return crawldb.Features{Words: int32(words), Outlinks: int32(out), Inlinks: int32(max(in, 1)),
		Images: int32(images), Depth: int32(depth), Bytes: int64(bytes)}, s
}
