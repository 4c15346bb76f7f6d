package topic

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// mustLearn learns a topic or fails the test.
func mustLearn(tb testing.TB, samples []string, o Options) *Model {
	tb.Helper()
	m, err := Learn(samples, o)
	if err != nil {
		tb.Fatalf("Learn: %v", err)
	}
	return m
}

// checkVector checks that m's vector is heaviest first, with distinct
// non-empty terms, positive weights and unit length, and that Weight
// agrees with it.
func checkVector(t *testing.T, m *Model) {
	t.Helper()
	v := m.Vector()
	if len(v) == 0 {
		t.Fatal("empty topic vector")
	}
	var norm float64
	seen := make(map[string]bool)
	for i, tw := range v {
		if tw.Term == "" || seen[tw.Term] || !(tw.Weight > 0) {
			t.Errorf("term %d: %+v (empty, repeated or not positive)", i, tw)
		}
		seen[tw.Term] = true
		if i > 0 && tw.Weight > v[i-1].Weight {
			t.Errorf("term %d %+v is heavier than term %d %+v", i, tw, i-1, v[i-1])
		}
		if got := m.Weight(tw.Term); got != tw.Weight {
			t.Errorf("Weight(%q) = %v, want %v", tw.Term, got, tw.Weight)
		}
		norm += tw.Weight * tw.Weight
	}
	if math.Abs(norm-1) > 1e-9 {
		t.Errorf("|w|² = %v, want 1", norm)
	}
}

func TestLearn(t *testing.T) {
	m := mustLearn(t, astronomySamples, Options{})
	checkVector(t, m)
	v := m.Vector()
	if v[0].Term != "telescop" {
		t.Errorf("heaviest term %q, want telescop (telescopes, telescope)", v[0].Term)
	}
	for _, term := range []string{"star", "astronom", "galaxi", "planet", "nebula"} {
		if m.Weight(term) == 0 {
			t.Errorf("topic lacks %q: %v", term, v)
		}
	}
	for _, stop := range []string{"the", "and", "of", "a"} {
		if m.Weight(stop) != 0 {
			t.Errorf("topic has stop word %q", stop)
		}
	}
	if m.TitleBoost() != DefaultTitleBoost {
		t.Errorf("TitleBoost() = %v, want %v", m.TitleBoost(), DefaultTitleBoost)
	}
	// The same samples make the same model, order and all.
	if again := mustLearn(t, astronomySamples, Options{}); !slices.Equal(again.Vector(), v) {
		t.Error("two Learns of the same samples differ")
	}
	// Vector returns a copy.
	v[0].Weight = 42
	if m.Vector()[0].Weight == 42 {
		t.Error("Vector shares the model's terms")
	}
}

func TestLearnMaxTerms(t *testing.T) {
	all := mustLearn(t, astronomySamples, Options{MaxTerms: 1000}).Vector()
	if len(all) >= DefaultMaxTerms || len(all) < 20 {
		t.Fatalf("%d terms in the samples; the test needs 20 to %d", len(all), DefaultMaxTerms)
	}
	m := mustLearn(t, astronomySamples, Options{MaxTerms: 5})
	checkVector(t, m)
	v := m.Vector()
	if len(v) != 5 {
		t.Fatalf("%d terms, want 5", len(v))
	}
	// The five heaviest, in the same order as in the full vector.
	for i := range v {
		if v[i].Term != all[i].Term {
			t.Errorf("term %d is %q, want %q", i, v[i].Term, all[i].Term)
		}
	}
	_, page := astronomyPage(t)
	if got := len(mustLearn(t, []string{page}, Options{}).Vector()); got != DefaultMaxTerms {
		t.Errorf("a topic learnt from the long page has %d terms, want %d", got, DefaultMaxTerms)
	}
}

// TestLearnTF checks the weights of a topic without background: the
// sublinear frequencies of the samples, 1 + ln tf.
func TestLearnTF(t *testing.T) {
	m := mustLearn(t, []string{"comet comet comet comet nebula", "nebula"}, Options{})
	want := map[string]float64{"comet": 1 + math.Log(4), "nebula": 1 + math.Log(2)}
	norm := math.Hypot(want["comet"], want["nebula"])
	for term, w := range want {
		if got := m.Weight(term); math.Abs(got-w/norm) > 1e-12 {
			t.Errorf("Weight(%q) = %v, want %v", term, got, w/norm)
		}
	}
}

// TestLearnBackground checks that a background lowers the weight of the
// words that off-topic pages use too, and that with a background of N
// texts the weights follow (1 + ln tf)·(ln((1+N)/(1+df)) + 1).
func TestLearnBackground(t *testing.T) {
	background := []string{
		cookingText,
		`The city never sleeps: at night the lights of the bars and theatres
shine until morning, and the streets are full of people going out.`,
		`Switch off the light when you leave the room at night, and save on
your electricity bill. Energy-saving light bulbs last for years.`,
		"", // no term: not counted in N
	}
	plain := mustLearn(t, astronomySamples, Options{})
	withBG := mustLearn(t, astronomySamples, Options{Background: background})
	checkVector(t, withBG)
	ratio := func(m *Model, term string) float64 { return m.Weight(term) / m.Weight("telescop") }
	for _, common := range []string{"light", "night"} {
		if ratio(withBG, common) >= ratio(plain, common) {
			t.Errorf("%q/telescop = %.3f with a background that uses it, %.3f without: want lower",
				common, ratio(withBG, common), ratio(plain, common))
		}
	}

	// The formula, on a small case: two samples and two background texts.
	m := mustLearn(t, []string{"comet comet orbit", "comet tail"},
		Options{Background: []string{"the orbit of a satellite", "a dog's tail", "..."}})
	n := 4.0 // two samples, two background texts with terms
	idf := func(df float64) float64 { return math.Log((1+n)/(1+df)) + 1 }
	want := map[string]float64{
		"comet": (1 + math.Log(3)) * idf(2),
		"orbit": 1 * idf(2),
		"tail":  1 * idf(2),
	}
	var norm float64
	for _, w := range want {
		norm += w * w
	}
	norm = math.Sqrt(norm)
	for term, w := range want {
		if got := m.Weight(term); math.Abs(got-w/norm) > 1e-12 {
			t.Errorf("Weight(%q) = %v, want %v", term, got, w/norm)
		}
	}
	if m.Weight("satellit") != 0 || m.Weight("dog") != 0 {
		t.Error("background terms are in the topic vector")
	}
}

func TestLearnErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []string
		o       Options
		want    string
	}{
		{"no samples", nil, Options{}, "no sample texts"},
		{"empty sample list", []string{}, Options{}, "no sample texts"},
		{"empty sample", []string{""}, Options{}, "sample 1 of 1 has no terms"},
		{"stop words only", []string{astronomySamples[0], "It is what it is, and that is that. 42!"}, Options{}, "sample 2 of 2 has no terms"},
		{"negative MaxTerms", astronomySamples, Options{MaxTerms: -1}, "MaxTerms is -1"},
		{"negative TitleBoost", astronomySamples, Options{TitleBoost: -2}, "TitleBoost is -2"},
		{"NaN TitleBoost", astronomySamples, Options{TitleBoost: math.NaN()}, "TitleBoost is NaN"},
		{"infinite TitleBoost", astronomySamples, Options{TitleBoost: math.Inf(1)}, "TitleBoost is +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Learn(tc.samples, tc.o)
			if err == nil {
				t.Fatalf("Learn = %v, want an error", m.Vector())
			}
			if !strings.HasPrefix(err.Error(), "topic: learn: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one starting topic: learn: with %q", err, tc.want)
			}
		})
	}
}

// TestModelJSON checks that a model survives its JSON form, alone and
// inside a job's specification.
func TestModelJSON(t *testing.T) {
	m := mustLearn(t, astronomySamples, Options{TitleBoost: 2.5, MaxTerms: 40})
	type spec struct {
		Name  string `json:"name"`
		Topic *Model `json:"topic"`
	}
	b, err := json.Marshal(spec{Name: "astronomy", Topic: m})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"topic":{"version":1,"title_boost":2.5,"terms":[{"term":"telescop","weight":`) {
		t.Errorf("JSON form: %.200s…", b)
	}
	var got spec
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Topic.Vector(), m.Vector()) || got.Topic.TitleBoost() != m.TitleBoost() {
		t.Errorf("decoded model differs:\n%v %v\n%v %v", got.Topic.TitleBoost(), got.Topic.Vector(), m.TitleBoost(), m.Vector())
	}
	again, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(b) {
		t.Errorf("encoding the decoded model gives\n%s\nwant\n%s", again, b)
	}
}

// TestModelJSONEdited checks that a hand-written model is ordered and
// scaled to unit length when decoded.
func TestModelJSONEdited(t *testing.T) {
	var m Model
	if err := json.Unmarshal([]byte(`{"version":1,"title_boost":1,"terms":[{"term":"star","weight":3},{"term":"comet","weight":4}]}`), &m); err != nil {
		t.Fatal(err)
	}
	checkVector(t, &m)
	want := []TermWeight{{"comet", 0.8}, {"star", 0.6}}
	if got := m.Vector(); len(got) != 2 || got[0].Term != "comet" || math.Abs(got[0].Weight-0.8) > 1e-12 || math.Abs(got[1].Weight-0.6) > 1e-12 {
		t.Errorf("Vector() = %v, want %v", got, want)
	}
}

func TestModelJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, json, want string }{
		{"not JSON", `{"version":1,`, "unexpected end"},
		{"wrong type", `[1,2]`, "cannot unmarshal"},
		{"no version", `{"title_boost":3,"terms":[{"term":"star","weight":1}]}`, "version 0, want 1"},
		{"future version", `{"version":2,"title_boost":3,"terms":[{"term":"star","weight":1}]}`, "version 2, want 1"},
		{"no title boost", `{"version":1,"terms":[{"term":"star","weight":1}]}`, "title_boost is 0"},
		{"no terms", `{"version":1,"title_boost":3,"terms":[]}`, "no terms"},
		{"empty term", `{"version":1,"title_boost":3,"terms":[{"term":"","weight":1}]}`, "a term is empty"},
		{"zero weight", `{"version":1,"title_boost":3,"terms":[{"term":"star","weight":0}]}`, `term "star" weighs 0`},
		{"negative weight", `{"version":1,"title_boost":3,"terms":[{"term":"star","weight":-1}]}`, `term "star" weighs -1`},
		{"repeated term", `{"version":1,"title_boost":3,"terms":[{"term":"star","weight":1},{"term":"star","weight":2}]}`, `term "star" is repeated`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Model
			err := json.Unmarshal([]byte(tc.json), &m)
			if err == nil {
				t.Fatalf("decoded %v, want an error", m.Vector())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one with %q", err, tc.want)
			}
		})
	}
}

// TestModelJSONExtremeWeights checks that weights near the ends of float64
// scale to unit length without overflow or underflow.
func TestModelJSONExtremeWeights(t *testing.T) {
	for _, w := range []string{"1e308", "5e-324"} {
		var m Model
		js := `{"version":1,"title_boost":3,"terms":[{"term":"star","weight":` + w + `},{"term":"comet","weight":` + w + `}]}`
		if err := json.Unmarshal([]byte(js), &m); err != nil {
			t.Fatal(err)
		}
		checkVector(t, &m)
	}
}
