package topic

import (
	"os"
	"testing"
)

// astronomySamples describe the topic of the tests: three paragraphs on
// astronomy, none of them taken from the test pages.
var astronomySamples = []string{
	`Astronomy is the study of the stars, planets, galaxies and everything
else beyond the Earth's atmosphere. Astronomers observe the light of
celestial objects with telescopes on the ground and in space, measuring
their brightness, colour and spectrum to learn how far away they are, what
they are made of and how they move.`,

	`A telescope gathers light with a lens or a mirror. The larger its
aperture, the fainter the stars and nebulae it can show, and the finer the
detail it resolves on the Moon and the planets. Reflecting telescopes use a
curved mirror, refracting telescopes a lens, and the eyepiece sets the
magnification.`,

	`On a dark night the Milky Way stretches across the sky, and an observer
with binoculars can find star clusters, the Andromeda galaxy and the
glowing gas of the Orion nebula. Amateur astronomers map the constellations,
watch meteor showers, follow comets and photograph the night sky.`,
}

// cookingPage is a page far from the topic.
const cookingTitle = "Slow-Cooked Beef Stew with Root Vegetables"

const cookingText = `Brown the beef in batches in a heavy casserole with a
little oil, so that the pieces sear rather than steam, and set them aside.
Soften the onions, carrots and celery in the same pan, scraping up the brown
bits, then stir in the garlic, tomato paste and a spoonful of flour. Pour in
the red wine and the stock, return the meat with its juices, add thyme and
bay leaves, and bring everything to a gentle simmer. Cover the pot and cook
it in a low oven for three hours, until the meat is tender enough to cut
with a spoon. Add the potatoes and parsnips for the last hour. Season with
salt and pepper, scatter over chopped parsley and serve with crusty bread.
The stew tastes even better the next day, once the flavours have mingled.`

// cookingStarText is cookingText with one word of the topic in it.
const cookingStarText = `This star anise beef stew is a winter favourite. ` + cookingText

// astronomyPage reads the long astronomy page of the tests: its title and
// its text, about 2,200 words.
func astronomyPage(tb testing.TB) (title, text string) {
	tb.Helper()
	b, err := os.ReadFile("testdata/amateur-astronomy.txt")
	if err != nil {
		tb.Fatal(err)
	}
	return "A Beginner's Guide to Amateur Astronomy and Backyard Telescopes", string(b)
}
