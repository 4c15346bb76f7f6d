package fetcher

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestKeepExchange: with KeepExchange a result carries the request
// header the server received, the server's IP address, the protocol and
// the body of a response that is not a success; without it, none of it.
func TestKeepExchange(t *testing.T) {
	var mu sync.Mutex
	got := map[string]http.Header{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got[r.URL.Path] = r.Header.Clone()
		mu.Unlock()
		if r.URL.Path == "/missing" {
			http.Error(w, "gone fishing", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("hello"))
	}))
	defer srv.Close()
	for _, keep := range []bool{true, false} {
		o := Options{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true, ConnectTimeout: 2 * time.Second,
			ReadTimeout: 2 * time.Second, MaxConnections: 2, Log: testLog(), NoProgressLog: true, KeepExchange: keep}
		res, _ := fetchAll(t, o, requests(srv.URL+"/ok", srv.URL+"/missing"))
		ok, missing := res[srv.URL+"/ok"], res[srv.URL+"/missing"]
		if ok == nil || missing == nil || ok.HTTPStatus != 200 || missing.HTTPStatus != 404 || string(ok.Body) != "hello" {
			t.Fatalf("keep %v: results %+v %+v", keep, ok, missing)
		}
		if !keep {
			if ok.RequestHeader != nil || ok.RemoteIP != "" || ok.Proto != "" || missing.Body != nil {
				t.Errorf("without KeepExchange: request header %v, IP %q, proto %q, 404 body %q", ok.RequestHeader, ok.RemoteIP, ok.Proto, missing.Body)
			}
			continue
		}
		for _, r := range []*Result{ok, missing} {
			sent := got[r.Request.URL[len(srv.URL):]]
			for k := range r.RequestHeader {
				if r.RequestHeader.Get(k) != sent.Get(k) {
					t.Errorf("%s: kept %s %q, the server received %q", r.Request.URL, k, r.RequestHeader.Get(k), sent.Get(k))
				}
			}
			if r.RequestHeader.Get("User-Agent") == "" || len(r.RequestHeader) != len(sent) {
				t.Errorf("%s: kept request header %v, the server received %v", r.Request.URL, r.RequestHeader, sent)
			}
			if r.RemoteIP != "127.0.0.1" || r.Proto != "HTTP/1.1" {
				t.Errorf("%s: IP %q, proto %q", r.Request.URL, r.RemoteIP, r.Proto)
			}
		}
		if string(missing.Body) != "gone fishing\n" {
			t.Errorf("404 body %q", missing.Body)
		}
	}
}
