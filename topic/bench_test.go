package topic

import "testing"

// BenchmarkTerms analyses the 2,200-word astronomy page with Terms, a
// fresh Analyzer (and memory of stems) for each page.
func BenchmarkTerms(b *testing.B) {
	_, text := astronomyPage(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var n int
	for b.Loop() {
		n = len(Terms(text))
	}
	b.ReportMetric(float64(n), "terms/page")
}

// BenchmarkAnalyzerTerms analyses the same page again and again with one
// Analyzer, as a task that parses many pages does: every stem is already
// known.
func BenchmarkAnalyzerTerms(b *testing.B) {
	_, text := astronomyPage(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var a Analyzer
	buf := make([]string, 0, 4096)
	for b.Loop() {
		buf = a.AppendTerms(buf[:0], text)
	}
}

// BenchmarkPageRelevance scores the 2,200-word astronomy page against the
// topic of the astronomy samples.
func BenchmarkPageRelevance(b *testing.B) {
	m, err := Learn(astronomySamples, Options{})
	if err != nil {
		b.Fatal(err)
	}
	title, text := astronomyPage(b)
	b.SetBytes(int64(len(title) + len(text)))
	b.ReportAllocs()
	var r float64
	for b.Loop() {
		r = m.PageRelevance(title, text)
	}
	b.ReportMetric(r, "relevance")
}

// BenchmarkLinkRelevance scores one link with anchor text, URL and
// context, none of them with the topic's heaviest term, so that all three
// are analysed.
func BenchmarkLinkRelevance(b *testing.B) {
	m, err := Learn(astronomySamples, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		m.LinkRelevance("Read the reviews", "https://www.example.org/astronomy/buying-guide.html?ref=nav",
			"Before you buy binoculars for stargazing")
	}
}
