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
