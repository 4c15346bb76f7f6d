package hadoop

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Monitor reads the output of `hadoop jar hadoop-streaming.jar`, line by
// line (stdout and stderr alike), and keeps the state of the job it
// submits: its ids and tracking URL, the map and reduce percentages, the
// task attempts that failed, how it ended and its counters (the
// "Counters: N" block Hadoop prints at the end). Line returns the state
// changes a line made, for the submitter's logs.
//
// It recognizes the lines of Hadoop 2 and 3 (the org.apache.hadoop.
// mapreduce.Job monitor and streaming.StreamJob) by their text, whatever
// the log prefix.
type Monitor struct {
	// JobID ("job_1710410000000_0007"), AppID ("application_...") and
	// TrackingURL are set once Hadoop prints them.
	JobID, AppID, TrackingURL string
	// Map and Reduce are the last percentages printed (-1 before the
	// first).
	Map, Reduce int
	// Succeeded says Hadoop printed that the job completed successfully;
	// State and Reason are a failed job's final state (FAILED, KILLED) and
	// its failure information.
	Succeeded     bool
	State, Reason string
	// Failures are the failed or killed task attempts, in order.
	Failures []AttemptFailure
	// Counters are the groups of the final Counters block by name, each
	// counter by name; nil until the block is read.
	Counters map[string]map[string]int64
	// Errors are the lines logged at ERROR level, and the lines of a
	// Java exception or of "Streaming Command Failed!".
	Errors []string

	submitted  bool
	inCounters bool
	group      string
	diagOf     int // index in Failures of the attempt whose diagnostics follow; -1: none
	reasonMore bool
	tail       []string
}

// AttemptFailure is a failed (or killed) task attempt.
type AttemptFailure struct {
	// Attempt is its id ("attempt_1710410000000_0007_m_000001_0").
	Attempt string
	// Status is FAILED, KILLED or TIPFAILED.
	Status string
	// Diagnostics are the lines Hadoop printed after it ("Error:
	// java.lang.RuntimeException: PipeMapRed.waitOutputThreads():
	// subprocess failed with code 3", then a stack trace).
	Diagnostics []string
}

// Summary is the attempt's first diagnostic line.
func (a AttemptFailure) Summary() string {
	for _, d := range a.Diagnostics {
		if d = strings.TrimSpace(d); d != "" {
			return d
		}
	}
	return ""
}

// EventKind is what changed.
type EventKind int

// The events of Monitor.Line.
const (
	// Submitted: the job id (and tracking URL, if printed by then) is
	// known.
	Submitted EventKind = iota + 1
	// Progress: the map or reduce percentage changed.
	Progress
	// AttemptFailed: a task attempt failed or was killed (Failures'
	// last); its diagnostics come in the next lines.
	AttemptFailed
	// Finished: the job succeeded, or failed with State and Reason.
	Finished
	// CountersRead: the Counters block ended.
	CountersRead
)

// NewMonitor returns a Monitor with no line read.
func NewMonitor() *Monitor {
	return &Monitor{Map: -1, Reduce: -1, diagOf: -1}
}

var (
	reAppID      = regexp.MustCompile(`Submitted application (application_[A-Za-z0-9]+_[0-9]+)`)
	reRunning    = regexp.MustCompile(`Running job: (job_\S+)`)
	reTokens     = regexp.MustCompile(`Submitting tokens for job: (job_\S+)`)
	reURL        = regexp.MustCompile(`(?:The url to track the job|Tracking URL): (\S+)`)
	reProgress   = regexp.MustCompile(`\bmap (\d+)% reduce (\d+)%`)
	reTaskEvent  = regexp.MustCompile(`Task Id : (attempt_\S+), Status : ([A-Z]+)`)
	reDone       = regexp.MustCompile(`Job (job_\S+) completed successfully`)
	reFailed     = regexp.MustCompile(`Job (job_\S+) failed with state (\w+) due to: ?(.*)`)
	reCounters   = regexp.MustCompile(`\bCounters: (\d+)\s*$`)
	reTaskFailed = regexp.MustCompile(`Task failed (task_[A-Za-z0-9_]+)`)
	// reLogLine is a log4j line: a date and a level.
	reLogLine = regexp.MustCompile(`^(\d{2,4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d:\d\d[,.]?\d*) (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) `)
)

// tailLines is how many of the last lines the Monitor keeps for an error
// that nothing else explains.
const tailLines = 8

// Line reads one line of output and returns the state changes it made.
func (m *Monitor) Line(line string) []EventKind {
	line = strings.TrimRight(line, "\r\n")
	var ev []EventKind
	if m.inCounters {
		var done bool
		if ev, done = m.counterLine(line); !done {
			return ev
		}
	}
	m.tail = append(m.tail, line)
	if len(m.tail) > tailLines {
		m.tail = m.tail[1:]
	}
	isLog := reLogLine.MatchString(line)
	if !isLog && m.continuation(line) {
		return ev
	}
	m.diagOf, m.reasonMore = -1, false
	if strings.Contains(line, " ERROR ") || strings.HasPrefix(line, "Streaming Command Failed!") ||
		strings.HasPrefix(line, "Exception in thread") || (!isLog && strings.Contains(line, "Exception: ")) {
		m.Errors = append(m.Errors, strings.TrimSpace(line))
	}
	ev = m.submissionLine(line, ev)
	ev = m.taskLine(line, ev)
	ev = m.endLine(line, ev)
	if reCounters.MatchString(line) {
		m.inCounters, m.group = true, ""
		m.Counters = map[string]map[string]int64{}
	}
	return ev
}

// continuation reads a line without a log prefix that continues a failed
// attempt's diagnostics or a failure reason, and says whether it was one.
func (m *Monitor) continuation(line string) bool {
	if strings.TrimSpace(line) == "" {
		return false
	}
	if m.diagOf >= 0 {
		f := &m.Failures[m.diagOf]
		if len(f.Diagnostics) < 40 {
			f.Diagnostics = append(f.Diagnostics, line)
		}
		return true
	}
	if m.reasonMore {
		m.Reason += "; " + strings.TrimSpace(line)
		return true
	}
	return false
}

// submissionLine reads the application and job ids and the tracking URL,
// appending Submitted to ev once the job is known.
func (m *Monitor) submissionLine(line string, ev []EventKind) []EventKind {
	if s := reAppID.FindStringSubmatch(line); s != nil {
		m.AppID = s[1]
	}
	for _, re := range []*regexp.Regexp{reTokens, reRunning} {
		if s := re.FindStringSubmatch(line); s != nil && m.JobID == "" {
			m.JobID = s[1]
		}
	}
	if s := reURL.FindStringSubmatch(line); s != nil {
		m.TrackingURL = s[1]
	}
	if !m.submitted && m.JobID != "" && (m.TrackingURL != "" || reRunning.MatchString(line)) {
		m.submitted = true
		ev = append(ev, Submitted)
	}
	return ev
}

// taskLine reads the map and reduce percentages (appending Progress to ev
// when they change) and failed task attempts (AttemptFailed).
func (m *Monitor) taskLine(line string, ev []EventKind) []EventKind {
	if s := reProgress.FindStringSubmatch(line); s != nil {
		mp, _ := strconv.Atoi(s[1])
		rp, _ := strconv.Atoi(s[2])
		if mp != m.Map || rp != m.Reduce {
			m.Map, m.Reduce = mp, rp
			ev = append(ev, Progress)
		}
	}
	if s := reTaskEvent.FindStringSubmatch(line); s != nil && s[2] != "SUCCEEDED" {
		m.Failures = append(m.Failures, AttemptFailure{Attempt: s[1], Status: s[2]})
		m.diagOf = len(m.Failures) - 1
		ev = append(ev, AttemptFailed)
	}
	return ev
}

// endLine reads the job's success or failure (appending Finished to ev).
func (m *Monitor) endLine(line string, ev []EventKind) []EventKind {
	if s := reDone.FindStringSubmatch(line); s != nil {
		m.Succeeded, m.State = true, "SUCCEEDED"
		if m.JobID == "" {
			m.JobID = s[1]
		}
		ev = append(ev, Finished)
	}
	if s := reFailed.FindStringSubmatch(line); s != nil {
		m.State, m.Reason = s[2], strings.TrimSpace(s[3])
		if m.JobID == "" {
			m.JobID = s[1]
		}
		m.reasonMore = true
		ev = append(ev, Finished)
	}
	return ev
}

// counterLine reads a line of the Counters block: "\tGROUP" or
// "\t\tNAME=VALUE". done is true at the first line that is neither (the
// block has ended; the line is read as any other).
func (m *Monitor) counterLine(line string) (ev []EventKind, done bool) {
	switch {
	case strings.HasPrefix(line, "\t\t"):
		kv := strings.TrimSpace(line)
		i := strings.LastIndexByte(kv, '=')
		if i < 0 || m.group == "" {
			return nil, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(kv[i+1:]), 10, 64)
		if err != nil {
			return nil, false
		}
		name := strings.TrimSpace(kv[:i])
		m.Counters[m.group][name] = n
		return nil, false
	case strings.HasPrefix(line, "\t"):
		m.group = strings.TrimSpace(line)
		if m.Counters[m.group] == nil {
			m.Counters[m.group] = map[string]int64{}
		}
		return nil, false
	}
	m.inCounters = false
	return []EventKind{CountersRead}, true
}

// End tells the Monitor the output ended: a Counters block still open is
// complete.
func (m *Monitor) End() []EventKind {
	if m.inCounters {
		m.inCounters = false
		return []EventKind{CountersRead}
	}
	return nil
}

// ApplicationID is the YARN application of the job: AppID, or the one the
// job id implies (job_N_M runs as application_N_M).
func (m *Monitor) ApplicationID() string {
	if m.AppID != "" {
		return m.AppID
	}
	if rest, ok := strings.CutPrefix(m.JobID, "job_"); ok && !strings.HasPrefix(rest, "local") {
		return "application_" + rest
	}
	return ""
}

// Err describes why the job failed, from what the output told: the job,
// its final state and reason, the last failed task attempt and its first
// diagnostic line, and where the task logs are (the tracking URL, and
// `yarn logs` for a YARN job). exit is the hadoop command's exit status.
func (m *Monitor) Err(exit int) error {
	if m.JobID == "" {
		msg := fmt.Sprintf("hadoop jar exited with status %d before a job was submitted", exit)
		if len(m.Errors) > 0 {
			return fmt.Errorf("%s: %s", msg, strings.Join(m.Errors, "; "))
		}
		if len(m.tail) > 0 {
			return fmt.Errorf("%s; its last output: %s", msg, strings.Join(m.tail, "; "))
		}
		return fmt.Errorf("%s and printed nothing", msg)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hadoop job %s", m.JobID)
	switch {
	case m.State != "" && m.Reason != "":
		fmt.Fprintf(&b, " ended %s: %s", m.State, m.Reason)
	case m.State != "":
		fmt.Fprintf(&b, " ended %s", m.State)
	default:
		fmt.Fprintf(&b, " failed (hadoop jar exited with status %d)", exit)
	}
	if f := m.lastFailure(); f != nil {
		fmt.Fprintf(&b, "; task attempt %s %s", f.Attempt, f.Status)
		if s := f.Summary(); s != "" {
			fmt.Fprintf(&b, ": %s", s)
		}
	} else if m.State == "" && len(m.Errors) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(m.Errors, "; "))
	}
	var logs []string
	if app := m.ApplicationID(); app != "" {
		logs = append(logs, "yarn logs -applicationId "+app)
	}
	if m.TrackingURL != "" {
		logs = append(logs, "tracking URL "+m.TrackingURL)
	}
	if len(logs) > 0 {
		fmt.Fprintf(&b, "; task logs: %s", strings.Join(logs, ", "))
	}
	return fmt.Errorf("%s", b.String())
}

// lastFailure is the last FAILED attempt of the task the job's failure
// names, else the last FAILED attempt, else the last attempt at all.
func (m *Monitor) lastFailure() *AttemptFailure {
	if s := reTaskFailed.FindStringSubmatch(m.Reason); s != nil {
		prefix := "attempt_" + strings.TrimPrefix(s[1], "task_") + "_"
		for i := len(m.Failures) - 1; i >= 0; i-- {
			if strings.HasPrefix(m.Failures[i].Attempt, prefix) && m.Failures[i].Status != "KILLED" {
				return &m.Failures[i]
			}
		}
	}
	for i := len(m.Failures) - 1; i >= 0; i-- {
		if m.Failures[i].Status != "KILLED" {
			return &m.Failures[i]
		}
	}
	if n := len(m.Failures); n > 0 {
		return &m.Failures[n-1]
	}
	return nil
}
