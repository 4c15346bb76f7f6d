package topic

import (
	"encoding/json"
	"math"
	"strings"
	"sync"
	"testing"
)

func TestPageRelevance(t *testing.T) {
	m := mustLearn(t, astronomySamples, Options{})
	title, text := astronomyPage(t)
	astronomy := m.PageRelevance(title, text)
	cooking := m.PageRelevance(cookingTitle, cookingText)
	cookingStar := m.PageRelevance(cookingTitle, cookingStarText)
	t.Logf("astronomy %.3f, cooking %.3f, cooking with a star %.3f", astronomy, cooking, cookingStar)

	if astronomy < 0.4 {
		t.Errorf("astronomy page scores %.3f, want at least 0.4", astronomy)
	}
	if cooking > 0.05 || astronomy < 10*cooking {
		t.Errorf("cooking page scores %.3f against the astronomy page's %.3f: want at most 0.05 and a tenth", cooking, astronomy)
	}
	if cookingStar <= cooking {
		t.Errorf("a word of the topic does not raise the cooking page: %.3f with it, %.3f without", cookingStar, cooking)
	}
	if astronomy < 5*cookingStar {
		t.Errorf("cooking page with one astronomy word scores %.3f, too close to the astronomy page's %.3f", cookingStar, astronomy)
	}

	for _, tc := range []struct {
		name, title, text string
		want              float64
	}{
		{"empty page", "", "", 0},
		{"stop words only", "The", "It is what it is.", 0},
		{"no term of the topic", "Stew", "Beef, onions and carrots.", 0},
		{"the samples themselves", "", strings.Join(astronomySamples, "\n"), -1},
	} {
		got := m.PageRelevance(tc.title, tc.text)
		switch {
		case tc.want >= 0 && got != tc.want:
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		case tc.want < 0 && got < 0.9:
			t.Errorf("%s: %v, want about 1", tc.name, got)
		}
	}
}

// TestPageRelevanceFormula checks the score on a page small enough to
// compute by hand.
func TestPageRelevanceFormula(t *testing.T) {
	var m Model
	if err := json.Unmarshal([]byte(`{"version":1,"title_boost":2,"terms":[{"term":"comet","weight":0.8},{"term":"star","weight":0.6}]}`), &m); err != nil {
		t.Fatal(err)
	}
	// p = {comet: 2·1 + 1, star: 1, tail: 1}
	got := m.PageRelevance("Comets", "A comet's tail, and a star.")
	want := (3*0.8 + 1*0.6) / math.Sqrt(3*3+1+1)
	if math.Abs(got-want) > 1e-12 {
		t.Errorf("PageRelevance = %v, want %v", got, want)
	}
	if got := m.PageRelevance("", "comet comet star star star star"); math.Abs(got-(2*0.8+4*0.6)/math.Sqrt(4+16)) > 1e-12 {
		t.Errorf("PageRelevance = %v", got)
	}
	// A page whose vector points exactly along the topic's scores 1.
	if got := m.PageRelevance("", "comet comet comet comet star star star"); math.Abs(got-1) > 1e-12 {
		t.Errorf("PageRelevance of a page along the topic = %v, want 1", got)
	}
}

// TestTitleBoost checks that the words of a page's title count more than
// those of its body, by TitleBoost.
func TestTitleBoost(t *testing.T) {
	const (
		title = "Telescopes for stargazing"
		body  = `Our shop is open from nine to five on weekdays. Orders placed
before noon are shipped the same day, and returns are free within thirty
days of delivery. Contact our friendly staff with any questions.`
	)
	score := func(boost float64, title, body string) float64 {
		return mustLearn(t, astronomySamples, Options{TitleBoost: boost}).PageRelevance(title, body)
	}
	noTitle := score(0, "", body)
	plain := score(1, title, body)
	boosted := score(DefaultTitleBoost, title, body)
	strong := score(10, title, body)
	t.Logf("no title %.3f, boost 1 %.3f, boost 3 %.3f, boost 10 %.3f", noTitle, plain, boosted, strong)
	if !(noTitle < plain && plain < boosted && boosted < strong) {
		t.Errorf("scores do not rise with the title boost: no title %.3f, 1 %.3f, 3 %.3f, 10 %.3f", noTitle, plain, boosted, strong)
	}
	// Boost 1 counts the title as body text.
	if got := score(1, "", title+" "+body); math.Abs(got-plain) > 1e-12 {
		t.Errorf("title with boost 1 scores %v, as body text %v", plain, got)
	}
}

func TestLinkRelevance(t *testing.T) {
	m := mustLearn(t, astronomySamples, Options{})
	rel := func(term string) float64 { return m.Weight(term) / m.Vector()[0].Weight }
	for _, tc := range []struct {
		name, anchor, url, context string
		want                       float64
	}{
		{"topic's heaviest term in the anchor", "telescope reviews", "/cooking/beef-stew.html", "", 1},
		{"anchor without evidence", "click here", "/cooking/beef-stew.html", "", 0},
		{"nothing at all", "", "", "", 0},
		{"another term in the anchor", "Galaxies", "", "", rel("galaxi")},
		{"the anchor's best term counts", "recipes and galaxies and stars", "", "", max(rel("galaxi"), rel("star"))},
		{"URL path", "click here", "http://www.example.org/astronomy/telescopes-guide.html", "", URLEvidence},
		{"URL host and query", "more", "https://astronomy.example.com/search?q=nebulae", "", URLEvidence * max(rel("astronom"), rel("nebula"))},
		{"escaped URL path", "more", "/guides/amateur%20astronomers", "", URLEvidence * max(rel("amateur"), rel("astronom"))},
		{"URL noise words", "more", "https://www.example.com/index.php?page=home", "", 0},
		{"context", "more", "/cooking/", "Our guide to the best telescopes:", ContextEvidence},
		{"anchor beats weaker evidence", "galaxies", "/telescopes/", "telescopes", max(rel("galaxi"), URLEvidence, ContextEvidence)},
		{"unparsable URL", "", "http://[::1/telescopes", "", URLEvidence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := m.LinkRelevance(tc.anchor, tc.url, tc.context)
			if math.Abs(got-tc.want) > 1e-12 {
				t.Errorf("LinkRelevance(%q, %q, %q) = %v, want %v", tc.anchor, tc.url, tc.context, got, tc.want)
			}
		})
	}
	good := m.LinkRelevance("telescope reviews", "/cooking/beef-stew.html", "")
	bad := m.LinkRelevance("click here", "/cooking/beef-stew.html", "")
	if good <= bad {
		t.Errorf("telescope reviews %v, click here %v", good, bad)
	}
}

// TestScoresAfterJSON checks that a model decoded from its JSON form gives
// every page and link exactly the score that the original gives.
func TestScoresAfterJSON(t *testing.T) {
	_, page := astronomyPage(t)
	for _, o := range []Options{{}, {TitleBoost: 1.5, MaxTerms: 30}, {Background: []string{cookingText, page}}} {
		m := mustLearn(t, astronomySamples, o)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var d Model
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		title, text := astronomyPage(t)
		pages := [][2]string{{title, text}, {cookingTitle, cookingText}, {cookingTitle, cookingStarText}, {"", astronomySamples[1]}}
		for _, p := range pages {
			if got, want := d.PageRelevance(p[0], p[1]), m.PageRelevance(p[0], p[1]); got != want {
				t.Errorf("%+v: PageRelevance(%q) = %v after JSON, %v before", o, p[0], got, want)
			}
		}
		links := [][3]string{
			{"telescope reviews", "/cooking/", ""},
			{"click here", "http://example.org/astronomy/telescopes-guide.html", ""},
			{"more", "/x", "the nebulae of Orion"},
		}
		for _, l := range links {
			if got, want := d.LinkRelevance(l[0], l[1], l[2]), m.LinkRelevance(l[0], l[1], l[2]); got != want {
				t.Errorf("%+v: LinkRelevance(%q) = %v after JSON, %v before", o, l, got, want)
			}
		}
	}
}

// TestZeroModel checks that a Model's zero value scores everything 0.
func TestZeroModel(t *testing.T) {
	var m Model
	if got := m.PageRelevance("Telescopes", "stars and galaxies"); got != 0 {
		t.Errorf("PageRelevance = %v", got)
	}
	if got := m.LinkRelevance("telescopes", "/astronomy/", "stars"); got != 0 {
		t.Errorf("LinkRelevance = %v", got)
	}
	if len(m.Vector()) != 0 || m.Weight("star") != 0 {
		t.Error("zero Model has terms")
	}
}

// TestConcurrentScoring scores pages from several goroutines at once
// (run with -race): the scores must be those of a lone goroutine.
func TestConcurrentScoring(t *testing.T) {
	m := mustLearn(t, astronomySamples, Options{})
	title, text := astronomyPage(t)
	pages := [][2]string{{title, text}, {cookingTitle, cookingText}, {"", astronomySamples[2]}, {cookingTitle, cookingStarText}}
	want := make([]float64, len(pages))
	for i, p := range pages {
		want[i] = m.PageRelevance(p[0], p[1])
	}
	wantLink := m.LinkRelevance("next", "/astronomy/nebulae.html", "")
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				p := (g + i) % len(pages)
				if got := m.PageRelevance(pages[p][0], pages[p][1]); got != want[p] {
					t.Errorf("goroutine %d: page %d scores %v, want %v", g, p, got, want[p])
					return
				}
				if got := m.LinkRelevance("next", "/astronomy/nebulae.html", ""); got != wantLink {
					t.Errorf("goroutine %d: link scores %v, want %v", g, got, wantLink)
					return
				}
			}
		})
	}
	wg.Wait()
}
