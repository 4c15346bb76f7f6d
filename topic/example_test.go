package topic_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/trawl/trawl/topic"
)

func ExampleLearn() {
	// A topic given as a few sentences.
	m, err := topic.Learn([]string{
		"Telescopes gather the faint light of stars, nebulae and galaxies.",
		"Amateur astronomers observe the planets and the Moon with a telescope.",
	}, topic.Options{})
	if err != nil {
		log.Fatal(err)
	}
	for _, tw := range m.Vector()[:3] {
		fmt.Printf("%s %.2f\n", tw.Term, tw.Weight)
	}

	// Pages: the cosine between the page and the topic.
	fmt.Printf("astronomy page: %.2f\n", m.PageRelevance("Choosing a telescope",
		"A bigger telescope shows fainter galaxies and nebulae."))
	fmt.Printf("cooking page: %.2f\n", m.PageRelevance("Beef stew",
		"Brown the beef, add the onions and simmer for three hours."))

	// Links, before they are fetched: anchor text, then URL, then context.
	fmt.Printf("telescope reviews: %.2f\n", m.LinkRelevance("telescope reviews", "/cooking/stew.html", ""))
	fmt.Printf("click here: %.2f\n", m.LinkRelevance("click here", "/cooking/stew.html", ""))
	fmt.Printf("click here to /astronomy/: %.2f\n", m.LinkRelevance("click here", "/astronomy/planets.html", ""))

	// The model travels in a job's specification as JSON.
	b, err := json.Marshal(m)
	if err != nil {
		log.Fatal(err)
	}
	var decoded topic.Model
	if err := json.Unmarshal(b, &decoded); err != nil {
		log.Fatal(err)
	}
	fmt.Println(decoded.LinkRelevance("telescope reviews", "", "") == m.LinkRelevance("telescope reviews", "", ""))
	// Output:
	// telescop 0.45
	// amateur 0.27
	// astronom 0.27
	// astronomy page: 0.43
	// cooking page: 0.00
	// telescope reviews: 1.00
	// click here: 0.00
	// click here to /astronomy/: 0.41
	// true
}

func ExampleTerms() {
	fmt.Println(topic.Terms("The Telescopes of 1668 and Saturn’s rings"))
	// Output: [telescop saturn ring]
}
