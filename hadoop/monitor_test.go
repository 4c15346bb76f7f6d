package hadoop

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/mapreduce"
)

// feed reads a captured output through a Monitor and returns it with the
// events in order.
func feed(t *testing.T, name string) (*Monitor, []EventKind) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMonitor()
	var evs []EventKind
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		evs = append(evs, m.Line(l)...)
	}
	return m, append(evs, m.End()...)
}

// TestMonitorSuccess reads the output of a successful Hadoop 3.3 streaming
// job: ids, tracking URL, progress, the end, and the Counters block (with
// Hadoop's own groups, display names with spaces and '=' inside names).
func TestMonitorSuccess(t *testing.T) {
	m, evs := feed(t, "success.txt")
	if m.JobID != "job_1710410000000_0007" || m.AppID != "application_1710410000000_0007" ||
		m.TrackingURL != "http://rm.example.com:8088/proxy/application_1710410000000_0007/" {
		t.Errorf("ids %q %q %q", m.JobID, m.AppID, m.TrackingURL)
	}
	if !m.Succeeded || m.State != "SUCCEEDED" || m.Map != 100 || m.Reduce != 100 || len(m.Failures) != 0 {
		t.Errorf("state %+v", m)
	}
	want := []EventKind{Submitted, Progress, Progress, Progress, Progress, Progress, Finished, CountersRead}
	if !slices.Equal(evs, want) {
		t.Errorf("events %v, want %v", evs, want)
	}
	if len(m.Counters) != 8 {
		t.Errorf("%d counter groups: %v", len(m.Counters), m.Counters)
	}
	for _, c := range []struct {
		group, name string
		want        int64
	}{
		{"File System Counters", "FILE: Number of bytes written", 1424307},
		{"Job Counters", "Launched map tasks", 3},
		{"Map-Reduce Framework", "Shuffled Maps", 6},
		{"File Output Format Counters", "Bytes Written", 0},
		{"inject", "injected", 1200},
		{"trawl", "reduce_input_records", 5230},
	} {
		if got, ok := m.Counters[c.group][c.name]; !ok || got != c.want {
			t.Errorf("%s/%s = %d (%v), want %d", c.group, c.name, got, ok, c.want)
		}
	}
	// The job's groups become the Result's counters; Hadoop's stay out.
	var cs mapreduce.Counters
	jobCounters(m.Counters, &cs)
	if got := cs.Groups(); !slices.Equal(got, []string{"inject", "trawl"}) {
		t.Errorf("groups %v", got)
	}
	if cs.Get("trawl", "spills") != 3 || cs.Get("inject", "crawldb_rows") != 1200 || cs.Get("trawl", "failed_task_attempts") != 0 {
		t.Errorf("counters %v", cs.Snapshot())
	}
	if len(m.Errors) != 0 {
		t.Errorf("errors %v", m.Errors)
	}
}

// TestMonitorFailed reads a job whose map task failed four times: each
// failed attempt with its diagnostics, the end state with the reason on
// two lines, and an error naming the last attempt and where the logs are.
func TestMonitorFailed(t *testing.T) {
	m, evs := feed(t, "failed.txt")
	if m.Succeeded || m.State != "FAILED" {
		t.Fatalf("state %q succeeded %v", m.State, m.Succeeded)
	}
	if !strings.HasPrefix(m.Reason, "Task failed task_1710410000000_0011_m_000001; Job failed as tasks failed. failedMaps:1") {
		t.Errorf("reason %q", m.Reason)
	}
	if len(m.Failures) != 4 {
		t.Fatalf("failures %+v", m.Failures)
	}
	if f := m.Failures[0]; f.Attempt != "attempt_1710410000000_0011_m_000001_0" || f.Status != "FAILED" ||
		f.Summary() != "Error: java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 3" || len(f.Diagnostics) != 9 {
		t.Errorf("first failure %+v", f)
	}
	if s := m.Failures[2].Summary(); s != "[2024-03-14 11:02:26.012]Container killed on request. Exit code is 143" {
		t.Errorf("third failure %q", s)
	}
	n := 0
	for _, e := range evs {
		if e == AttemptFailed {
			n++
		}
	}
	if n != 4 {
		t.Errorf("%d AttemptFailed events", n)
	}
	if m.Counters["Job Counters"]["Failed map tasks"] != 4 {
		t.Errorf("counters %v", m.Counters)
	}
	var cs mapreduce.Counters
	jobCounters(m.Counters, &cs)
	if cs.Get("trawl", "failed_task_attempts") != 4 {
		t.Errorf("failed_task_attempts %d", cs.Get("trawl", "failed_task_attempts"))
	}
	err := m.Err(1).Error()
	for _, w := range []string{"hadoop job job_1710410000000_0011 ended FAILED", "Task failed task_1710410000000_0011_m_000001",
		"task attempt attempt_1710410000000_0011_m_000001_3 FAILED: Error: java.lang.RuntimeException: PipeMapRed.waitOutputThreads(): subprocess failed with code 2",
		"yarn logs -applicationId application_1710410000000_0011", "tracking URL http://rm.example.com:8088/proxy/application_1710410000000_0011/"} {
		if !strings.Contains(err, w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if !slices.Contains(m.Errors, "2024-03-14 11:02:40,121 ERROR streaming.StreamJob: Job not successful!") {
		t.Errorf("errors %v", m.Errors)
	}
}

// TestMonitorLaunchError reads a submission Hadoop refused: no job id, and
// the error says so with Hadoop's message.
func TestMonitorLaunchError(t *testing.T) {
	m, evs := feed(t, "launch_error.txt")
	if m.JobID != "" || len(evs) != 0 {
		t.Errorf("job %q events %v", m.JobID, evs)
	}
	err := m.Err(5).Error()
	if !strings.Contains(err, "exited with status 5 before a job was submitted") || !strings.Contains(err, "already exists") ||
		!strings.Contains(err, "Streaming Command Failed!") {
		t.Errorf("error %q", err)
	}
	// Nothing printed at all.
	if err := NewMonitor().Err(1).Error(); !strings.Contains(err, "printed nothing") {
		t.Errorf("error %q", err)
	}
}

// TestMonitorLocalJobID checks that a local job id implies no YARN
// application.
func TestMonitorLocalJobID(t *testing.T) {
	m := NewMonitor()
	m.Line("2024-03-14 12:00:00,001 INFO mapreduce.Job: Running job: job_local1234_0001")
	if m.JobID != "job_local1234_0001" || m.ApplicationID() != "" {
		t.Errorf("%q %q", m.JobID, m.ApplicationID())
	}
	m = NewMonitor()
	m.Line("24/03/14 12:00:00 INFO mapreduce.Job: Running job: job_1_0002")
	m.Line("24/03/14 12:00:09 INFO mapreduce.Job:  map 7% reduce 0%")
	if m.ApplicationID() != "application_1_0002" || m.Map != 7 {
		t.Errorf("%q %d", m.ApplicationID(), m.Map)
	}
}
