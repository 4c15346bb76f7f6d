package fetcher_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"

	"github.com/trawl/trawl/fetcher"
)

// Example fetches one page from a server on the loopback address, which
// the fetcher refuses without AllowPrivate. The server has no robots.txt
// (404: everything is allowed).
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hello.html" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<title>Hello</title>")
	}))
	defer srv.Close()

	f, err := fetcher.New(fetcher.Options{
		Agent:         "examplebot",
		AllowPrivate:  true, // the server is on 127.0.0.1
		NoServerDelay: true,
		NoProgressLog: true,
		Log:           slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	reqs := []fetcher.Request{{URL: srv.URL + "/hello.html"}}
	_, err = f.Run(context.Background(), reqs, func(r *fetcher.Result) error {
		fmt.Println(r.Status, r.HTTPStatus, r.ContentType)
		fmt.Printf("%s\n", r.Body)
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// fetch_success 200 text/html
	// <title>Hello</title>
}
