package simweb

import (
	"slices"
	"strings"
)

// vocabulary is the word stock pages are written from: pseudo-English
// words with Zipf frequencies (frequent words short), plus accented Latin
// words for windows-1252 pages and Japanese words for Shift_JIS pages.
type vocabulary struct {
	words    []string
	alias    aliasTable
	latin    []string
	japanese []string
}

const vocabSize = 4096

// newVocabulary builds the pseudo-words of a seed from syllables.
func newVocabulary(seed uint64) vocabulary {
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z br cr dr fl gr pl st tr ch sh th")
	vowels := strings.Fields("a e i o u a e i o ai ea ou")
	codas := strings.Fields("- - - - n r s t l m nd st rk ng")
	r := newRNG(seed, sVocab, 0, 0)
	seen := make(map[string]bool, vocabSize)
	words := make([]string, 0, vocabSize)
	var b strings.Builder
	for len(words) < vocabSize {
		b.Reset()
		syll := 1 + r.intn(3)
		if r.chance(0.1) {
			syll++
		}
		for range syll {
			b.WriteString(onsets[r.intn(len(onsets))])
			b.WriteString(vowels[r.intn(len(vowels))])
		}
		if c := codas[r.intn(len(codas))]; c != "-" {
			b.WriteString(c)
		}
		w := b.String()
		if len(w) < 2 || seen[w] {
			continue
		}
		seen[w] = true
		words = append(words, w)
	}
	// Frequent words are short, as in natural language.
	slices.SortStableFunc(words, func(a, b string) int { return len(a) - len(b) })
	weights := make([]float64, vocabSize)
	for i := range weights {
		weights[i] = 1 / float64(i+1)
	}
	return vocabulary{
		words: words,
		alias: newAlias(weights),
		// Words whose letters are all in windows-1252 (several only in its
		// 0x80-0x9F range: œ, Š, Ÿ, ƒ, €, ™, curly quotes, dashes).
		latin: strings.Fields("café naïve façade crème brûlée déjà résumé piñata jalapeño Zürich Ångström " +
			"œuvre über señor mañana São garçon élève fiancée rôle hôtel château Köln Müller smörgåsbord " +
			"Ærø €5 “quoted” it’s — naïveté Noël protégé soufflé tête-à-tête voilà Škoda Ÿvonne ƒolio ™ " +
			"Málaga Besançon Göteborg Øresund Reykjavík Ibiça cœur"),
		// Words all in JIS X 0208, hence encodable in Shift_JIS.
		japanese: strings.Fields("東京 日本 天気 新聞 情報 会社 学校 電話 時間 今日 明日 世界 経済 政治 技術 研究 " +
			"大学 映画 音楽 写真 料理 旅行 地図 駅 電車 図書館 病院 銀行 郵便局 カメラ コンピュータ ソフトウェア " +
			"ネットワーク 検索 文書 記事 番組 季節 桜 富士山 大阪 京都 北海道 沖縄 価格 商品 お知らせ 更新 " +
			"ニュース スポーツ 野球 サッカー 健康 教育 環境 文化 歴史 科学 山 川 海 空 春 夏 秋 冬"),
	}
}

// word draws one word for a page of locale loc (0 English, 1 Latin,
// 2 Japanese) from a 64-bit random value.
func (v *vocabulary) word(h uint64, loc uint8) string {
	switch loc {
	case 1:
		if h&0xff < 38 { // ~15%
			return v.latin[(h>>8)%uint64(len(v.latin))]
		}
	case 2:
		if h&0xff < 205 { // ~80%
			return v.japanese[(h>>8)%uint64(len(v.japanese))]
		}
	}
	return v.words[v.alias.sample(mix64(h))]
}
