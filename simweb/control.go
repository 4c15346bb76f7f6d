package simweb

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ControlHost is a Host header that always reaches the control endpoints
// (so does any IP literal that is not a host's own address, e.g. the
// main listener's 127.0.0.1:port).
const ControlHost = "simweb.control"

// controlHelp lists the control endpoints.
const controlHelp = `simweb control endpoints (on the main listener, Host: simweb.control or its IP):
GET  /_simweb/clock                      the simulated time: {"now": RFC 3339, "speed": s, "external": b}
POST /_simweb/clock?t=RFC3339[&speed=s]  set the simulated time (and speed, simulated s per real s)
POST /_simweb/clock?advance=DUR          move the simulated time by DUR (Go duration, or days: 7d, 1.5d)
GET  /_simweb/accesslog[?since=SEQ]      the access log as JSON lines (entries with seq > SEQ)
GET  /_simweb/dnslog                     the DNS query log as JSON lines
GET  /_simweb/seeds                      the home page URLs, one per line
GET  /_simweb/truth[?hosts=1]            the page (or host) truth as Parquet
`

// control serves the control endpoints.
func (s *Server) control(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	switch r.URL.Path {
	case "/_simweb", "/_simweb/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, controlHelp)
	case "/_simweb/clock":
		s.controlClock(w, r)
	case "/_simweb/accesslog":
		var since int64
		if v := r.URL.Query().Get("since"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				http.Error(w, "since: "+err.Error(), http.StatusBadRequest)
				return
			}
			since = n
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		for _, a := range s.access.Since(since) {
			if err := enc.Encode(a); err != nil {
				return
			}
		}
		_ = bw.Flush()
	case "/_simweb/seeds":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Join(s.Seeds(), "\n")+"\n")
	case "/_simweb/truth":
		w.Header().Set("Content-Type", "application/vnd.apache.parquet")
		var err error
		if r.URL.Query().Get("hosts") != "" {
			err = s.web.WriteHostTruth(w, s.addr)
		} else {
			err = s.web.WriteTruthAddressed(w, s.addr)
		}
		if err != nil {
			s.log.Error("simweb: control: truth", "err", err)
		}
	case "/_simweb/dnslog":
		w.Header().Set("Content-Type", "application/x-ndjson")
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		for _, q := range s.DNSLog() {
			if err := enc.Encode(q); err != nil {
				return
			}
		}
		_ = bw.Flush()
	default:
		http.Error(w, "simweb: no such control endpoint (see /_simweb/)", http.StatusNotFound)
	}
}

func (s *Server) controlClock(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost, http.MethodPut:
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if s.clock.external != nil {
			http.Error(w, "simweb: the clock is external (ServeOptions.Clock) and cannot be set", http.StatusConflict)
			return
		}
		t := s.clock.now()
		speed := s.clock.speedNow()
		if v := r.Form.Get("t"); v != "" {
			parsed, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				http.Error(w, "t: want an RFC 3339 time: "+err.Error(), http.StatusBadRequest)
				return
			}
			t = parsed
		}
		if v := r.Form.Get("advance"); v != "" {
			d, err := parseAdvance(v)
			if err != nil {
				http.Error(w, "advance: "+err.Error(), http.StatusBadRequest)
				return
			}
			t = t.Add(d)
		}
		if v := r.Form.Get("speed"); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				http.Error(w, "speed: want a number >= 0", http.StatusBadRequest)
				return
			}
			speed = f
		}
		if err := s.SetClock(t, speed); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST, PUT")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(struct {
		Now      string  `json:"now"`
		Speed    float64 `json:"speed"`
		External bool    `json:"external"`
	}{s.clock.now().Format(time.RFC3339Nano), s.clock.speedNow(), s.clock.external != nil})
}

// parseAdvance parses a Go duration ("36h", "-90m") or a number of days
// ("7d", "1.5d").
func parseAdvance(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		f, err := strconv.ParseFloat(days, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (like 90s, 12h or 7d)", v)
		}
		return time.Duration(f * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (like 90s, 12h or 7d)", v)
	}
	return d, nil
}
