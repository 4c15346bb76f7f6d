package simweb

import (
	"regexp"
	"strings"
	"testing"
)

// TestTopicVocabularies checks the word lists: real-word-sized, lower
// case ASCII (any page encoding holds them), no repeats, few words shared
// between topics, and no overlap with generic anchors or sample glue.
func TestTopicVocabularies(t *testing.T) {
	word := regexp.MustCompile(`^[a-z]{2,}$`)
	owners := map[string][]int{}
	for k, list := range topicLists {
		words := strings.Fields(list)
		if len(words) < 120 || len(words) > 200 {
			t.Errorf("topic %s has %d words, want 120..200", topicNames[k], len(words))
		}
		seen := map[string]bool{}
		for _, w := range words {
			if !word.MatchString(w) {
				t.Errorf("topic %s: %q is not a lower case ASCII word", topicNames[k], w)
			}
			if seen[w] {
				t.Errorf("topic %s: %q twice", topicNames[k], w)
			}
			seen[w] = true
			owners[w] = append(owners[w], k)
		}
	}
	shared := make([]int, MaxTopics)
	for _, ks := range owners {
		if len(ks) > 1 {
			for _, k := range ks {
				shared[k]++
			}
		}
	}
	for k, n := range shared {
		if total := len(strings.Fields(topicLists[k])); n > total/10 {
			t.Errorf("topic %s shares %d of its %d words with other topics, want at most 10%%", topicNames[k], n, total)
		}
	}
	var neutral []string
	for _, a := range genericAnchors {
		neutral = append(neutral, strings.Fields(a)...)
	}
	neutral = append(neutral, sampleGlue[:]...)
	for _, w := range neutral {
		if len(owners[w]) > 0 {
			t.Errorf("generic word %q belongs to topic %v", w, owners[w])
		}
	}
}
