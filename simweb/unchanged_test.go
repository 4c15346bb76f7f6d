package simweb

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// fingerprint hashes everything observable of a web: every host's
// description, every page's description (with its rendered features),
// outlinks, URLs under two addressings, the bodies of versions 0 and 3 of
// every content page, the seed URLs and the fields of the truth rows that
// every web has (columns added later are left out).
func fingerprint(t *testing.T, w *Web) string {
	t.Helper()
	h := sha256.New()
	a := Addressing{Port: 8080}
	for i := range w.NumHosts() {
		hi := w.Host(i)
		fmt.Fprintf(h, "host %d %s %s %v %v %v %d %v %d %d|%d %q %v %q\n", hi.Index, hi.Name, hi.IP, hi.Role, hi.Genre,
			hi.Latency, hi.KeepAlive, hi.Validators, hi.Home, hi.Pages,
			hi.Robots.Status, hi.Robots.Body, hi.Robots.CrawlDelay, hi.Robots.Disallows)
	}
	for _, s := range w.Seeds(a) {
		fmt.Fprintln(h, "seed", s)
	}
	for id := range w.NumPages() {
		p := w.Page(id)
		fmt.Fprintf(h, "page %d %d %s %v %d %d %x %v %v %x %+v %v %v %v\n", p.ID, p.Host, p.Path, p.Kind, p.Status, p.Target,
			math.Float64bits(p.Rate), p.ChangeClass, p.Created.Unix(), math.Float64bits(p.PageRank), p.Features,
			p.RobotsAllowed, p.Noindex, p.Nofollow)
		fmt.Fprintln(h, w.URL(id, a), w.URL(id, Addressing{IPPerHost: true, Port: 9}), w.Outlinks(id))
		for _, v := range []int{0, 3} {
			if body, err := w.Body(id, v, a); err == nil {
				h.Write(body)
			}
		}
	}
	hashTruthRows(t, h, w, a)
	return hex.EncodeToString(h.Sum(nil))
}

// hashTruthRows writes the truth file, reads it back and hashes the
// columns every web has.
func hashTruthRows(t *testing.T, h hash.Hash, w *Web, a Addressing) {
	t.Helper()
	var buf bytes.Buffer
	if err := w.WriteTruthAddressed(&buf, a); err != nil {
		t.Fatal(err)
	}
	fsys := storage.NewLocal()
	path := filepath.Join(t.TempDir(), "truth.parquet")
	if err := storage.WriteFileAtomic(fsys, path, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[TruthPage](fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		fmt.Fprintf(h, "row %d %s %s %s %s %d %s %s %s %s %s %s %x %s %d %x %+v %v %v %v %v\n",
			r.ID, r.URL, r.Host, r.Path, r.Kind, r.Status, r.Target, r.ContentType, r.Charset, r.CharsetIn,
			r.Genre, r.HostRole, math.Float64bits(r.ChangeRate), r.ChangeClass, r.Created.UnixMilli(),
			math.Float64bits(r.PageRank), r.Features, r.RobotsAllowed, r.Noindex, r.Nofollow, r.BaseHref)
	}
}

// TestWebsUnchanged pins three webs as they were before topics existed
// (the fingerprints were computed then): a web without topics must stay
// the same, byte for byte, draw for draw.
func TestWebsUnchanged(t *testing.T) {
	def := DefaultConfig()
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{smallConfig(42), "289a89ec2bef1563805c3d04ddc3d4259743a36fdc785cca868ef9d4d2ef3638"},
		{def, "9e691294a75a9ec8677520dbb15ea8d691dd5338bc749cb7d05b93a107ae6a8e"},
		{Config{Seed: 9, Hosts: 7, Pages: 40}, "70289946d13630c38cdb51929ec88822ee78d89905d43dd21590442c2c5bf0b6"},
	} {
		if got := fingerprint(t, newWeb(t, c.cfg)); got != c.want {
			t.Errorf("web of seed %d, %d hosts, %d pages, hazards %s: fingerprint %s, want %s",
				c.cfg.Seed, c.cfg.Hosts, c.cfg.Pages, c.cfg.Hazards, got, c.want)
		}
	}
}
