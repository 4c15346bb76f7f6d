package fetcher

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// robotsSite is a loopback server whose robots.txt redirects to the rules
// disallowing /no; it records the paths asked.
func robotsSite(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/rules.txt", http.StatusMovedPermanently)
		case "/rules.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /no\nCrawl-delay: 0.25\n")
		default:
			fmt.Fprint(w, "<html><title>page</title></html>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// TestRobotsOnly checks Options.RobotsOnly and OnRobots: the verdicts come
// from robots.txt (reached through a redirect) and no page is requested.
func TestRobotsOnly(t *testing.T) {
	srv, asked := robotsSite(t)
	var traces []*RobotsFetch
	f, err := New(Options{Agent: "testbot", AllowPrivate: true, NoServerDelay: true, Log: testLog(),
		RobotsOnly: true, OnRobots: func(r *RobotsFetch) { traces = append(traces, r) }})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Result{}
	_, err = f.Run(context.Background(), []Request{{URL: srv.URL + "/ok", ID: 0}, {URL: srv.URL + "/no", ID: 1}},
		func(r *Result) error { got[r.Request.URL] = r; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if r := got[srv.URL+"/ok"]; r == nil || r.Code != CodeSkipped || r.Message != RobotsOnlyAllowed {
		t.Errorf("/ok: %+v", r)
	}
	if r := got[srv.URL+"/no"]; r == nil || r.Code != CodeRobotsDenied {
		t.Errorf("/no: %+v", r)
	}
	if a := asked(); len(a) != 2 || a[0] != "/robots.txt" || a[1] != "/rules.txt" {
		t.Errorf("asked %v, want robots.txt and its redirect only", a)
	}
	if len(traces) != 1 {
		t.Fatalf("%d robots.txt traces, want 1", len(traces))
	}
	tr := traces[0]
	if tr.Origin != srv.URL || tr.Outcome != RobotsParsed || tr.Status != 200 || len(tr.Requests) != 2 ||
		tr.Requests[0].HTTPStatus != 301 || tr.Requests[1].URL != srv.URL+"/rules.txt" ||
		tr.CrawlDelay.Milliseconds() != 250 || tr.Agent != "testbot" || len(tr.Body) == 0 {
		t.Errorf("trace %+v", tr)
	}
}

// TestIgnoreRobots checks Options.IgnoreRobots: no robots.txt request, and
// a URL robots.txt disallows is fetched.
func TestIgnoreRobots(t *testing.T) {
	srv, asked := robotsSite(t)
	called := false
	f, err := New(Options{Agent: "testbot", AllowPrivate: true, NoServerDelay: true, Log: testLog(),
		IgnoreRobots: true, OnRobots: func(*RobotsFetch) { called = true }})
	if err != nil {
		t.Fatal(err)
	}
	var res *Result
	if _, err := f.Run(context.Background(), []Request{{URL: srv.URL + "/no"}}, func(r *Result) error { res = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if res == nil || res.Code != CodeSuccess || called {
		t.Errorf("result %+v, OnRobots called %v", res, called)
	}
	if a := asked(); len(a) != 1 || a[0] != "/no" {
		t.Errorf("asked %v, want /no only", a)
	}
	if _, err := New(Options{Agent: "testbot", IgnoreRobots: true, RobotsOnly: true}); err == nil {
		t.Error("IgnoreRobots and RobotsOnly at once: no error")
	}
}
