package simweb

// The topic vocabularies of topical webs (Config.Topics): real English
// words, lower case ASCII (so that every page encoding holds them), one
// list per topic, topic k using list k. The lists are almost disjoint: a
// few words belong to two topics on purpose (star, pitch, score, stock,
// yield, organ, station, market, ...), as ambiguous words do in real text.
// A test checks the sizes, the ASCII and the overlap.

// topicNames names the topics, in order.
var topicNames = [...]string{"astronomy", "cooking", "football", "gardening", "finance", "music", "medicine", "travel"}

// MaxTopics is the largest Config.Topics: the number of topic
// vocabularies.
const MaxTopics = len(topicNames)

// topicLists holds the words of each topic, separated by white space.
var topicLists = [MaxTopics]string{
	// astronomy
	`telescope galaxy nebula comet asteroid meteor meteorite planet orbit eclipse
	constellation supernova quasar pulsar cosmos cosmic stellar solar lunar crater
	spectrum redshift observatory astronomer celestial equinox solstice zenith gravity
	magnitude parallax satellite spacecraft rocket astronaut mercury venus mars
	jupiter saturn uranus neptune pluto moon sunspot corona aurora nova dwarf
	binary globular spiral elliptical interstellar intergalactic universe expansion
	radiation infrared ultraviolet photon parsec wavelength lens aperture eyepiece
	refractor reflector declination meridian ecliptic perihelion aphelion apogee
	perigee singularity wormhole magnetar neutron hydrogen helium plasma fusion
	exoplanet transit occultation conjunction retrograde rover probe lander
	capsule shuttle station cosmonaut andromeda orion sirius polaris betelgeuse vega
	cassiopeia pleiades hubble kepler galileo copernicus planetarium stargazing
	starlight twilight crescent gibbous axis rotation astrophysics cosmology
	spectroscopy photometry luminosity cepheid accretion gamma radio antenna
	interferometer detector rings titan europa ganymede callisto phobos deimos
	charon ceres vesta kuiper trojan apollo voyager cassini regolith ejecta
	meteoroid bolide fireball perseids leonids zodiac galactic heliocentric
	geocentric umbra penumbra totality star stars starry astronomical`,
	// cooking
	`recipe kitchen oven stove skillet saucepan frying roast roasting bake baking
	boil simmer saute braise grill grilled poach whisk knead dough flour yeast
	sugar butter cream milk cheese egg eggs garlic onion shallot ginger pepper
	salt basil oregano thyme rosemary parsley cilantro cumin paprika cinnamon
	nutmeg vanilla chocolate caramel sauce gravy broth stock soup stew casserole
	pasta noodle noodles rice risotto bread loaf pastry pie tart cake cookie
	muffin pancake omelet salad dressing vinaigrette vinegar olive lemon lime
	zest tomato potato carrot celery mushroom spinach cabbage broccoli zucchini
	eggplant lentil chickpea tofu chicken beef pork lamb bacon sausage salmon
	tuna shrimp prawn fillet marinade marinate seasoning spice spicy savory
	umami flavor tasty delicious dessert appetizer entree dinner lunch breakfast
	brunch meal dish chef cookbook ingredient ingredients tablespoon teaspoon
	ladle spatula colander grater peeler cutting chop dice mince julienne
	blender mixer puree glaze crust crispy tender juicy sizzle skewer barbecue
	brine pickle ferment sourdough biscuit scone crepe waffle custard pudding
	mousse souffle meringue frosting icing garnish herb yogurt honey syrup jam
	curry wok dumpling taco burrito lasagna ravioli gnocchi pesto hummus falafel`,
	// football
	`football soccer goal goals goalkeeper keeper striker midfielder defender
	winger fullback captain coach referee linesman whistle penalty penalties kick
	corner offside foul tackle header volley dribble passing cross shot saves
	match fixture fixtures league tournament championship champions derby
	stadium pitch turf jersey boots ball crossbar squad team club fans supporters
	chant season transfer signing loan contract wages scout academy youth debut
	hattrick brace equaliser equalizer victory defeat relegation promotion
	playoff playoffs semifinal final quarterfinal halftime fulltime injury
	stoppage replay assist assists scorer formation tactics pressing
	counterattack possession lineup substitute substitution bench dugout
	touchline sideline byline wing flank midfield defence defense attack
	attacker forward centreback sweeper playmaker booking booked yellow card
	dismissal suspension kickoff shootout nutmeg curler chip lob screamer rebound
	deflection premiership terraces stands turnstile standings points unbeaten
	streak matchday training drills fitness hamstring ligament physio goalline
	score record manager clubhouse trophy silverware`,
	// gardening
	`garden gardening gardener soil compost mulch manure fertilizer seedling sprout
	germinate sow sowing transplant prune pruning shears trowel spade hoe rake
	wheelbarrow hose watering irrigation greenhouse shed raised hedge lawn mower
	grass weed weeds weeding perennial annual biennial bulb bulbs tulip daffodil
	rose roses lily orchid peony dahlia lavender sunflower marigold geranium
	petunia fern moss ivy shrub shrubs tree trees sapling orchard vegetable
	vegetables tomato lettuce cucumber squash pumpkin courgette pea peas potato
	herb mint sage chives roots stem leaf leaves foliage bloom blossom flower
	flowers petal pollen pollinator bees butterfly aphid slug snail pest pests
	blight mildew fungus frost hardy tender shade planting planter pots
	container potting loam clay sandy acidic alkaline drainage trellis vine
	climber arbor pergola allotment harvest crop crops yield rotation cutting
	propagate propagation graft cultivar hybrid heirloom organic earthworm worms
	topsoil humus pond rockery meadow wildflower hedgerow topiary bonsai
	succulent cactus houseplant repot deadhead evergreen deciduous conifer maple
	oak birch willow magnolia camellia azalea rhododendron hydrangea clematis
	wisteria jasmine honeysuckle foxglove delphinium hosta begonia pansy primrose
	snowdrop crocus iris plant plants season border`,
	// finance
	`finance financial money bank banking banker loan mortgage interest credit
	debit debt deposit savings account budget income expense expenses tax taxes
	investment investor invest portfolio stock stocks shares equity bond bonds
	dividend yield market markets trading trader broker exchange fund funds
	pension retirement insurance premium annuity asset assets liability
	liabilities capital profit loss revenue earnings quarterly fiscal inflation
	deflation recession economy economic currency dollar euro yen forex hedge
	derivative options futures commodity commodities bullion volatility
	valuation appraisal audit auditor accountant accounting ledger balance
	payroll salary wages invoice payment payments cash cashflow liquidity
	solvency bankruptcy insolvency creditor lender borrower borrowing refinance
	collateral securities underwriting merger acquisition shareholder
	stakeholder treasury monetary billion benchmark bullish bearish rally slump
	downturn crash bubble speculation arbitrage leverage margin brokerage
	custodian fintech cryptocurrency bitcoin blockchain wallet overdraft
	checking teller loans lending taxpayer tariff subsidy
	stimulus bailout crowdfunding venture startup valuations`,
	// music
	`music musical musician song songs melody harmony rhythm tempo beat chord
	chords scale notes pitch tune lyrics verse chorus album record guitar bass
	drums drummer piano pianist violin cello viola flute clarinet saxophone
	trumpet trombone tuba harp organ keyboard synthesizer microphone amplifier
	concert gig tour festival stage band orchestra symphony sonata concerto
	opera aria choir singer vocalist vocals composer conductor composition score
	notation octave treble clef crescendo staccato legato forte jazz blues rock
	folk classical hiphop rap reggae punk metal soul funk disco techno ambient
	acoustic riff solo duet quartet ensemble rehearsal recording studio producer
	mixing mastering vinyl playlist radio track tracks ballad anthem lullaby hymn
	serenade improvisation groove metronome tuning tuner strings fret reed
	mouthpiece percussion cymbal snare timpani xylophone ukulele banjo mandolin
	accordion harmonica encore audience headliner setlist charts debut star
	songwriter bassist guitarist cellist violinist soprano tenor baritone
	falsetto`,
	// medicine
	`medicine medical doctor physician nurse nursing patient patients hospital
	clinic surgery surgeon diagnosis symptom symptoms treatment therapy therapist
	prescription dose dosage drug drugs pharmacy pharmacist vaccine vaccination
	immunity immune infection virus bacteria bacterial antibiotic antibiotics
	fever cough pain headache migraine nausea fatigue inflammation allergy
	asthma diabetes insulin cancer tumor chemotherapy oncology cardiology heart
	cardiac artery blood pressure cholesterol stroke lung lungs kidney liver
	brain nerve neurology bone fracture arthritis muscle tissue cells organ
	transplant biopsy ultrasound radiology anesthesia anesthetic stethoscope
	thermometer syringe injection pill capsule ointment bandage wound stitches
	sutures recovery rehabilitation chronic acute disease diseases disorder
	syndrome epidemic pandemic outbreak hygiene sanitation nutrition vitamin
	vitamins protein metabolism hormone hormones thyroid pediatric pediatrician
	geriatric obstetrics pregnancy prenatal midwife dental dentist optometrist
	dermatology eczema rash psychiatry psychiatrist depression anxiety insomnia
	clinical placebo pathology pathogen genome genetic anatomy physiology
	ambulance paramedic emergency intensive ward wheelchair crutches prognosis
	remission relapse screening checkup vaccines antibody antibodies diagnostic
	epidemiology`,
	// travel
	`travel traveler traveling trip journey vacation holiday holidays tourist
	tourism tour destination itinerary passport visa luggage suitcase backpack
	backpacking airport airline flight flights boarding departure arrival layover
	terminal hotel hostel resort inn motel booking reservation cruise ferry train
	railway station taxi rental highway map maps guidebook sightseeing landmark
	landmarks museum cathedral castle palace monument ruins beach beaches island
	islands coast coastline harbor mountain mountains hiking trek trekking trail
	camping campsite tent glacier desert safari jungle rainforest waterfall lake
	village countryside souvenir postcard currency exchange customs border
	jetlag sunscreen snorkeling scuba diving surfing skiing lodge chalet cabin
	villa bungalow guesthouse concierge excursion expedition explorer adventure
	wanderlust nomad abroad overseas cuisine market bazaar festival landscape
	scenery panorama viewpoint sunset sunrise camera tripod compass atlas
	continent equator tropical exotic paradise getaway honeymoon pilgrimage
	embassy consulate airfare fare ticket tickets platform carriage sleeper deck
	marina lighthouse promenade boulevard plaza piazza cobblestone vineyard
	winery capital`,
}

// genericAnchors are anchor texts that say nothing about their target.
var genericAnchors = [...]string{"read more", "click here", "next", "more", "continue reading", "details",
	"here", "see also", "previous", "learn more", "this page", "full story"}

// sampleGlue are the function words that join topic words into the
// sentences of a topic sample.
var sampleGlue = [...]string{"the", "the", "the", "of", "of", "and", "and", "in", "to", "a", "for", "with", "on",
	"is", "are", "about", "from", "by", "new", "best", "how", "your", "our", "all"}
