package topic

// englishStopWords are the words that Terms drops before stemming: articles,
// pronouns, auxiliary and modal verbs, prepositions, conjunctions, common
// adverbs and their contractions. They carry no topic, and every page is
// full of them. The list follows the usual English lists of search engines
// and of the Snowball project, lower-case, with the straight apostrophe
// (Terms turns ’ into ' before it looks a word up).
var englishStopWords = []string{
	// Articles, determiners and quantifiers.
	"a", "an", "the", "this", "that", "these", "those", "each", "every",
	"either", "neither", "some", "any", "all", "both", "few", "many", "much",
	"more", "most", "other", "another", "such", "no", "nor", "not", "only",
	"own", "same", "several", "enough",
	// Pronouns.
	"i", "me", "my", "myself", "we", "us", "our", "ours", "ourselves",
	"you", "your", "yours", "yourself", "yourselves", "he", "him", "his",
	"himself", "she", "her", "hers", "herself", "it", "its", "itself",
	"they", "them", "their", "theirs", "themselves", "what", "which", "who",
	"whom", "whose", "one", "ones", "anyone", "anything", "everyone",
	"everything", "nobody", "nothing", "someone", "something",
	// Auxiliary and modal verbs.
	"am", "is", "are", "was", "were", "be", "been", "being", "have", "has",
	"had", "having", "do", "does", "did", "doing", "done", "will", "would",
	"shall", "should", "can", "could", "may", "might", "must", "ought",
	// Prepositions.
	"about", "above", "across", "after", "against", "along", "among",
	"around", "at", "before", "behind", "below", "beneath", "beside",
	"between", "beyond", "by", "down", "during", "except", "for", "from",
	"in", "inside", "into", "near", "of", "off", "on", "onto", "out",
	"outside", "over", "per", "since", "through", "throughout", "till", "to",
	"toward", "towards", "under", "until", "up", "upon", "via", "with",
	"within", "without",
	// Conjunctions.
	"and", "but", "or", "if", "then", "than", "because", "as", "while",
	"whether", "so", "though", "although", "unless", "whereas",
	// Adverbs and other function words.
	"again", "also", "always", "already", "else", "ever", "here", "there",
	"when", "where", "why", "how", "however", "just", "now", "never", "often",
	"once", "quite", "rather", "still", "too", "very", "yet", "even", "thus",
	"therefore", "hence", "indeed", "perhaps", "etc",
	// Contractions (the "n't", "'s", "'re" forms) and their stubs.
	"aren't", "can't", "cannot", "couldn't", "didn't", "doesn't", "don't",
	"hadn't", "hasn't", "haven't", "isn't", "mightn't", "mustn't",
	"needn't", "shan't", "shouldn't", "wasn't", "weren't", "won't",
	"wouldn't", "he'd", "he'll", "he's", "she'd", "she'll", "she's", "i'd",
	"i'll", "i'm", "i've", "it's", "let's", "that's", "there's", "they'd",
	"they'll", "they're", "they've", "we'd", "we'll", "we're", "we've",
	"what's", "where's", "who's", "you'd", "you'll", "you're", "you've",
	"don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "ll",
	"re", "ve",
}

// stopWords is englishStopWords as a set, built once and only read after.
var stopWords = func() map[string]struct{} {
	m := make(map[string]struct{}, len(englishStopWords))
	for _, w := range englishStopWords {
		m[w] = struct{}{}
	}
	return m
}()

// urlStopWords are the words of a URL that say nothing about its page's
// topic: schemes, the web's name, the commonest top-level domains, file
// extensions and the names of index pages and scripts. LinkRelevance drops
// them from a link's URL as well as the stop words.
var urlStopWords = map[string]struct{}{
	"http": {}, "https": {}, "www": {}, "com": {}, "org": {}, "net": {},
	"edu": {}, "gov": {}, "info": {}, "html": {}, "htm": {}, "shtml": {},
	"xhtml": {}, "php": {}, "asp": {}, "aspx": {}, "jsp": {}, "cgi": {},
	"index": {}, "default": {}, "home": {}, "page": {},
}
