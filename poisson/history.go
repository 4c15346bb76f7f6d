package poisson

import (
	"math"
	"time"
)

// Observation is one fetch of a page: when, and whether it found the page
// changed since the previous fetch. It has the fields of
// crawldb.Observation (which this package cannot import: crawldb's
// schedules use this package); FromHistory reads crawldb's type directly.
type Observation struct {
	Time    time.Time
	Changed bool
}

// Config chooses and tunes the estimator FromHistory uses.
type Config struct {
	// RegularSpread is the largest relative spread of the interval
	// lengths, (max - min)/mean, for which a history counts as regular and
	// gets the regular closed form at the mean interval; wider histories
	// get the irregular estimator. Negative means never regular. Zero
	// means exactly equal lengths only.
	RegularSpread float64
	// Solver configures the irregular estimator's root search.
	Solver Solver
}

// DefaultConfig returns the configuration the scheduler uses: regular when
// the interval lengths are within 5% of each other, the smoothed irregular
// estimator otherwise.
func DefaultConfig() Config {
	return Config{RegularSpread: 0.05}
}

// historyBuffer is the stack buffer size that makes FromHistory allocation
// free for histories up to crawldb.HistoryLimit (32) entries and beyond.
const historyBuffer = 64

// FromHistory estimates the change rate, per second, from a fetch history
// in time order, such as crawldb.Datum.History:
//
//	est := poisson.FromHistory(d.History, func(o crawldb.Observation) (time.Time, bool) {
//		return o.Time, o.Changed
//	}, poisson.DefaultConfig())
//
// Interval i runs from entry i-1's time to entry i's and saw a change if
// entry i's flag is set; the first entry's flag is not used (its interval
// began outside the history). Intervals of zero or negative length are
// skipped (counted in Skipped). The estimator is chosen by the spread of
// the interval lengths (see Config and the package documentation). With
// fewer than two entries the estimate is empty (OK reports false).
func FromHistory[E any](h []E, at func(E) (time.Time, bool), cfg Config) Estimate {
	var buf [historyBuffer]Interval
	iv := buf[:0]
	if len(h) > historyBuffer+1 {
		iv = make([]Interval, 0, len(h)-1)
	}
	skipped := 0
	// Seconds and nanoseconds separately: exact, cheaper than
	// time.Time.Sub plus Duration.Seconds, and no int64 overflow.
	var prevSec int64
	var prevNsec int
	for i, o := range h {
		t, changed := at(o)
		sec, nsec := t.Unix(), t.Nanosecond()
		later := sec > prevSec || (sec == prevSec && nsec > prevNsec)
		if i > 0 {
			if later {
				l := float64(sec-prevSec) + float64(nsec-prevNsec)*1e-9
				iv = append(iv, Interval{Length: l, Changed: changed})
			} else {
				skipped++
			}
		}
		if i == 0 || later {
			prevSec, prevNsec = sec, nsec
		}
	}
	e := FromIntervals(iv, cfg)
	e.Skipped += skipped
	return e
}

// FromObservations is FromHistory for this package's Observation.
func FromObservations(h []Observation, cfg Config) Estimate {
	return FromHistory(h, func(o Observation) (time.Time, bool) { return o.Time, o.Changed }, cfg)
}

// FromIntervals estimates the change rate from intervals, choosing the
// estimator by their spread as FromHistory does. Intervals of
// non-positive or non-finite length are skipped (counted in Skipped); with
// none left the estimate is empty.
func FromIntervals(iv []Interval, cfg Config) Estimate {
	valid := true
	for _, v := range iv {
		if !(v.Length > 0 && v.Length <= math.MaxFloat64) {
			valid = false
			break
		}
	}
	skipped := 0
	if !valid {
		var buf [historyBuffer]Interval
		clean := buf[:0]
		if len(iv) > historyBuffer {
			clean = make([]Interval, 0, len(iv))
		}
		for _, v := range iv {
			if v.Length > 0 && !math.IsInf(v.Length, 1) {
				clean = append(clean, v)
			} else {
				skipped++
			}
		}
		iv = clean
	}
	if len(iv) == 0 {
		return Estimate{Skipped: skipped}
	}
	tmin, tmax, sum := iv[0].Length, iv[0].Length, 0.0
	x := 0
	for _, v := range iv {
		if v.Length < tmin {
			tmin = v.Length
		}
		if v.Length > tmax {
			tmax = v.Length
		}
		sum += v.Length
		if v.Changed {
			x++
		}
	}
	mean := sum / float64(len(iv))
	var e Estimate
	if cfg.RegularSpread >= 0 && tmax-tmin <= cfg.RegularSpread*mean {
		e = regular(len(iv), x, mean)
		e.Span = sum
	} else {
		e = irregular(iv, cfg.Solver)
	}
	e.Skipped = skipped
	return e
}
