package simweb

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/trawl/trawl/parquetio"
)

// Access is one HTTP request the server saw.
type Access struct {
	// Seq numbers entries from 1 in the order requests finished.
	Seq int64 `json:"seq" parquet:"seq"`
	// Start is when the request's headers had been read; End when the
	// response was done (or abandoned). Real (wall-clock) times.
	Start time.Time `json:"start" parquet:"start,timestamp(microsecond)"`
	End   time.Time `json:"end" parquet:"end,timestamp(microsecond)"`
	// Sim is the simulated time the request was answered at.
	Sim time.Time `json:"sim" parquet:"sim,timestamp(millisecond)"`
	// Host is the web host the request went to ("" if none: control
	// requests, unknown Host headers); HostHeader the Host header as sent.
	Host       string `json:"host" parquet:"host,dict"`
	HostHeader string `json:"host_header" parquet:"host_header,dict"`
	Method     string `json:"method" parquet:"method,dict"`
	// Path is the request target as sent (path and query).
	Path string `json:"path" parquet:"path"`
	// Status is the status sent (0 if none: reset, blackhole, abandoned).
	Status int32 `json:"status" parquet:"status"`
	// Bytes is the number of body bytes written.
	Bytes int64 `json:"bytes" parquet:"bytes"`
	// Conn identifies the TCP connection (from 1, in accept order);
	// ConnRequest is the request's number on it (from 1).
	Conn        uint64 `json:"conn" parquet:"conn"`
	ConnRequest int32  `json:"conn_request" parquet:"conn_request"`
	Remote      string `json:"remote" parquet:"remote"`
	Local       string `json:"local" parquet:"local,dict"`
	UserAgent   string `json:"user_agent" parquet:"user_agent,dict"`
	// Conditional: the request carried If-None-Match or If-Modified-Since.
	Conditional bool `json:"conditional" parquet:"conditional"`
	// Page is the page id served (-1 if none); Version its version.
	Page    int32 `json:"page" parquet:"page"`
	Version int32 `json:"version" parquet:"version"`
	// Outcome is "" for a normal response, else one of "reset",
	// "blackhole", "trickle", "slowheaders", "http10", "aborted" (the
	// client went away or a write failed), "outage".
	Outcome string `json:"outcome,omitempty" parquet:"outcome,dict"`
	// Delay is the latency the server added before answering (the host's
	// latency with its jitter, and on a connection's first request the
	// connection's cost, ServeOptions.ConnectLatency).
	Delay time.Duration `json:"delay_ns,omitempty" parquet:"delay_ns"`
}

// DefaultAccessLogLimit is the default number of entries kept in memory.
const DefaultAccessLogLimit = 1 << 20

// AccessLog records requests. In memory it keeps the most recent Limit
// entries (older ones are dropped and counted); optionally every entry is
// also streamed as a JSON line to a writer. Safe for concurrent use.
type AccessLog struct {
	mu      sync.Mutex
	limit   int
	ring    []Access
	head    int // index of the oldest entry when the ring is full
	seq     int64
	dropped int64
	jsonl   *bufio.Writer
	enc     *json.Encoder
	err     error
}

func newAccessLog(limit int, jsonl io.Writer) *AccessLog {
	if limit <= 0 {
		limit = DefaultAccessLogLimit
	}
	l := &AccessLog{limit: limit}
	if jsonl != nil {
		l.jsonl = bufio.NewWriter(jsonl)
		l.enc = json.NewEncoder(l.jsonl)
	}
	return l
}

func (l *AccessLog) add(a Access) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	a.Seq = l.seq
	if len(l.ring) < l.limit {
		l.ring = append(l.ring, a)
	} else {
		l.ring[l.head] = a
		l.head = (l.head + 1) % l.limit
		l.dropped++
	}
	if l.enc != nil && l.err == nil {
		if err := l.enc.Encode(a); err != nil {
			l.err = fmt.Errorf("simweb: access log: %w", err)
		}
	}
}

// flush writes buffered JSON lines.
func (l *AccessLog) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.jsonl != nil && l.err == nil {
		if err := l.jsonl.Flush(); err != nil {
			l.err = fmt.Errorf("simweb: access log: %w", err)
		}
	}
	return l.err
}

// Entries returns a copy of the entries in memory, in Seq order.
func (l *AccessLog) Entries() []Access { return l.Since(0) }

// Since returns a copy of the entries in memory with Seq > seq.
func (l *AccessLog) Since(seq int64) []Access {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Access, 0, len(l.ring))
	out = append(out, l.ring[l.head:]...)
	out = append(out, l.ring[:l.head]...)
	i, _ := slices.BinarySearchFunc(out, seq+1, func(a Access, s int64) int {
		switch {
		case a.Seq < s:
			return -1
		case a.Seq > s:
			return 1
		}
		return 0
	})
	return out[i:]
}

// Len is the number of entries ever recorded.
func (l *AccessLog) Len() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

// Dropped is the number of entries dropped from memory (beyond the limit).
func (l *AccessLog) Dropped() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

// Err is the first error writing the JSON-lines stream, if any.
func (l *AccessLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// WriteJSONL writes the entries in memory as JSON lines.
func (l *AccessLog) WriteJSONL(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, a := range l.Entries() {
		if err := enc.Encode(a); err != nil {
			return fmt.Errorf("simweb: write access log: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("simweb: write access log: %w", err)
	}
	return nil
}

// WriteParquet writes the entries in memory as a zstd Parquet file.
func (l *AccessLog) WriteParquet(w io.Writer) error {
	pw := parquetio.NewWriter[Access](w)
	if err := pw.Write(l.Entries()...); err != nil {
		pw.Close()
		return fmt.Errorf("simweb: write access log: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("simweb: write access log: %w", err)
	}
	return nil
}

// HostStats summarizes the requests to one host, for politeness checks.
type HostStats struct {
	Requests int
	// Connections is the number of distinct connections used.
	Connections int
	// MaxConcurrent is the largest number of requests in progress at once.
	MaxConcurrent int
	// MinGap is the shortest time from the end of a request to the start
	// of the next one (0 if they overlapped; -1 if fewer than 2 requests).
	MinGap time.Duration
	// MaxPerConn is the most requests seen on one connection.
	MaxPerConn int
}

// Stats summarizes entries per host (entries without a host are skipped).
func Stats(entries []Access) map[string]HostStats {
	byHost := make(map[string][]Access)
	for _, a := range entries {
		if a.Host != "" {
			byHost[a.Host] = append(byHost[a.Host], a)
		}
	}
	out := make(map[string]HostStats, len(byHost))
	for h, es := range byHost {
		slices.SortFunc(es, func(a, b Access) int { return a.Start.Compare(b.Start) })
		st := HostStats{Requests: len(es), MinGap: -1}
		conns := make(map[uint64]int)
		type ev struct {
			t     time.Time
			delta int
		}
		evs := make([]ev, 0, 2*len(es))
		var latest time.Time // latest end among earlier requests
		for i, a := range es {
			conns[a.Conn]++
			evs = append(evs, ev{a.Start, 1}, ev{a.End, -1})
			if i > 0 {
				gap := max(a.Start.Sub(latest), 0)
				if st.MinGap < 0 || gap < st.MinGap {
					st.MinGap = gap
				}
			}
			if a.End.After(latest) {
				latest = a.End
			}
		}
		st.Connections = len(conns)
		for _, n := range conns {
			st.MaxPerConn = max(st.MaxPerConn, n)
		}
		slices.SortFunc(evs, func(a, b ev) int {
			if c := a.t.Compare(b.t); c != 0 {
				return c
			}
			return a.delta - b.delta // ends before starts at the same instant
		})
		cur := 0
		for _, e := range evs {
			cur += e.delta
			st.MaxConcurrent = max(st.MaxConcurrent, cur)
		}
		out[h] = st
	}
	return out
}
