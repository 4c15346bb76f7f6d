package jobs

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/crawldb"
	"github.com/trawl/trawl/topic"
)

// The two manuals of the mixed site: an observing guide for amateur
// astronomers and a cookbook, each a set of chapters written from its own
// sentences.
var (
	astronomyManual = []string{
		"Point the telescope at the planet and let the eyepiece cool before you focus.",
		"A refractor telescope gathers light through its objective lens, a reflector through its mirror.",
		"Jupiter shows four bright moons and dark cloud belts through a small telescope.",
		"The Moon is best observed near the terminator, where the craters cast long shadows.",
		"Find the Andromeda galaxy by star hopping from the constellation Cassiopeia.",
		"A dark sky far from city lights reveals faint nebulae and star clusters.",
		"The magnification of a telescope is its focal length divided by the eyepiece focal length.",
		"Saturn's rings tilt toward the Earth as the planet moves along its orbit.",
		"Use a star chart to locate the constellations and the bright stars that mark them.",
		"An equatorial mount tracks the stars as the Earth rotates, so the planet stays in view.",
		"Comets grow bright tails as they approach the Sun, and meteors streak across the night sky.",
		"Observe the phases of Venus and the red surface of Mars when they are near opposition.",
	}
	cookingManual = []string{
		"Whisk the eggs with the sugar until the batter turns pale and thick.",
		"Simmer the tomato sauce gently with garlic, basil and olive oil for twenty minutes.",
		"Knead the bread dough until it is smooth, then let it rise in a warm kitchen.",
		"Season the roast chicken with salt, pepper and thyme before it goes into the oven.",
		"Chop the onions finely and fry them in butter until they are golden.",
		"Bake the cake in a preheated oven and test it with a skewer before serving.",
		"A good stock needs bones, vegetables and a long, slow simmer in a large pot.",
		"Fold the flour into the batter gently so that the cake stays light.",
		"Grill the fish on a hot pan with lemon, herbs and a little salt.",
		"Serve the soup hot with fresh bread and a spoon of cream.",
		"Marinate the beef overnight in wine, garlic and rosemary.",
		"Roll the pastry thin, line the tin and blind bake the tart shell.",
	}
	astronomyTitles = []string{"Telescopes", "The Moon", "Jupiter", "Saturn", "Galaxies", "Nebulae", "Star charts",
		"Mounts", "Comets", "Mars", "Venus", "Constellations", "Eyepieces", "Dark skies", "Meteors", "Star clusters"}
	cookingTitles = []string{"Cakes", "Sauces", "Bread", "Roast chicken", "Onions", "Stock", "Pastry", "Fish",
		"Soups", "Beef", "Tarts", "Batter", "Herbs", "Pasta", "Salads", "Desserts"}
)

// mixedSite serves two unrelated manuals on one loopback server: a home
// page linking to the first chapter of each, and chapters that link to
// four chapters of their own manual and one of the other. It returns the
// server and the URL prefixes of the two manuals.
func mixedSite(t *testing.T) (srv *httptest.Server, astro, cook string) {
	t.Helper()
	chapter := func(manual string, i int) string { return fmt.Sprintf("/%s/chapter-%02d.html", manual, i) }
	title := func(manual string, i int) string {
		if manual == "astronomy" {
			return "Observing guide: " + astronomyTitles[i]
		}
		return "Kitchen manual: " + cookingTitles[i]
	}
	page := func(w http.ResponseWriter, manual string, i int) {
		own, other, sentences := "astronomy", "cooking", astronomyManual
		if manual == "cooking" {
			own, other, sentences = "cooking", "astronomy", cookingManual
		}
		var b strings.Builder
		fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><h1>%s</h1>\n", html.EscapeString(title(own, i)), html.EscapeString(title(own, i)))
		for k := range 5 {
			fmt.Fprintf(&b, "<p>%s %s</p>\n", html.EscapeString(sentences[(i+k)%len(sentences)]), html.EscapeString(sentences[(i*3+k+1)%len(sentences)]))
		}
		for k := 1; k <= 4; k++ {
			j := (i + k*k) % 16
			fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", chapter(own, j), html.EscapeString(title(own, j)))
		}
		j := (i*5 + 3) % 16
		fmt.Fprintf(&b, "<p>See also <a href=\"%s\">%s</a></p></body></html>\n", chapter(other, j), html.EscapeString(title(other, j)))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, b.String())
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var manual string
		var i int
		switch {
		case r.URL.Path == "/robots.txt":
			http.NotFound(w, r)
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, "<html><head><title>Manuals</title></head><body><h1>Manuals</h1><p>Two manuals live on this server.</p>"+
				"<a href=\"%s\">%s</a> <a href=\"%s\">%s</a></body></html>", chapter("astronomy", 0), title("astronomy", 0), chapter("cooking", 0), title("cooking", 0))
		default:
			if _, err := fmt.Sscanf(r.URL.Path, "/astronomy/chapter-%02d.html", &i); err == nil {
				manual = "astronomy"
			} else if _, err := fmt.Sscanf(r.URL.Path, "/cooking/chapter-%02d.html", &i); err == nil {
				manual = "cooking"
			}
			if manual == "" || i < 0 || i >= 16 {
				http.NotFound(w, r)
				return
			}
			page(w, manual, i)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, srv.URL + "/astronomy/", srv.URL + "/cooking/"
}

// crawlMixedSite crawls the mixed site for rounds rounds of topN pages,
// focused on focus's topic if it has one, and returns the CrawlDB.
func crawlMixedSite(t *testing.T, focus FocusOptions, rounds, topN int) map[string]crawldb.Datum {
	t.Helper()
	srv, _, _ := mixedSite(t)
	env := testEnv(t)
	seeds := filepath.Join(t.TempDir(), "seeds.txt")
	writeFile(t, seeds, srv.URL+"/\n")
	sched := ScheduleOptions{Name: "default"}
	o := CrawlOptions{
		Seeds: []string{seeds}, Rounds: rounds, Now: time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC), RoundInterval: time.Hour,
		Generate: GenerateOptions{Schedule: sched, TopN: int64(topN)},
		Update:   UpdateOptions{Schedule: sched},
		Fetch:    FetchOptions{Agent: "trawl-test", NoServerDelay: true, AllowPrivate: true},
		Parse:    ParseOptions{Focus: focus},
	}
	if focus.Topic != nil {
		o.Update.Scoring = ScoringLinkRank
		o.LinkRank = LinkRankOptions{Topic: focus.Topic}
	}
	if _, err := Crawl(context.Background(), env, o); err != nil {
		t.Fatal(err)
	}
	return readDB(t, env)
}

// TestFocusedCrawlStaysOnTopic crawls a server with an astronomy guide and
// a cookbook, topic astronomy from three sentences, 5 pages a round: the
// focused crawl fetches astronomy chapters only (the cookbook's pages it
// meets are marked off topic and their links not followed), while the same
// budget unfocused fetches both manuals.
func TestFocusedCrawlStaysOnTopic(t *testing.T) {
	m, err := topic.Learn([]string{
		"Amateur astronomy: observing the planets, the Moon and the stars with a telescope.",
		"Galaxies, nebulae and star clusters are faint objects for a telescope under a dark sky.",
		"Star charts show the constellations; an equatorial mount follows the stars across the night sky.",
	}, topic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	share := func(db map[string]crawldb.Datum) (astro, cook int) {
		for u, d := range db {
			if d.Status != crawldb.StatusDBFetched {
				continue
			}
			switch {
			case strings.Contains(u, "/astronomy/"):
				astro++
			case strings.Contains(u, "/cooking/"):
				cook++
			}
		}
		return astro, cook
	}
	focused := crawlMixedSite(t, FocusOptions{Topic: m}, 5, 5)
	astro, cook := share(focused)
	if astro < 14 || cook > 1 {
		t.Errorf("focused crawl fetched %d astronomy and %d cooking chapters, want at least 14 and at most 1", astro, cook)
	}
	for u, d := range focused {
		if d.Status != crawldb.StatusDBFetched || u == "" {
			continue
		}
		onTopic := strings.Contains(u, "/astronomy/")
		if strings.Contains(u, "/cooking/") && (!d.OffTopic || d.Relevance >= DefaultPageThreshold) {
			t.Errorf("%s: relevance %v, off topic %v", u, d.Relevance, d.OffTopic)
		}
		if onTopic && (d.OffTopic || d.Relevance < 0.2 || d.LinkRelevance <= 0) {
			t.Errorf("%s: relevance %v, link relevance %v, off topic %v", u, d.Relevance, d.LinkRelevance, d.OffTopic)
		}
	}
	plainAstro, plainCook := share(crawlMixedSite(t, FocusOptions{}, 5, 5))
	if plainCook < 5 || plainAstro+plainCook < astro {
		t.Errorf("unfocused crawl fetched %d astronomy and %d cooking chapters: the web does not test focusing", plainAstro, plainCook)
	}
	t.Logf("focused: %d astronomy, %d cooking; unfocused: %d astronomy, %d cooking", astro, cook, plainAstro, plainCook)
}
