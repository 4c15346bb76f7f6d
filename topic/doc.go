// Package topic is the text side of a focused (topic) crawler. So far it
// turns texts into index terms.
//
// The design follows the focused crawler of the Institute of Computing
// Technology, Chinese Academy of Sciences: Li Sheng-tao, Zhao Zhang-jie and
// Yu Zhi-hua, "Design and Realization of Focused Web Crawler" (基于主题的
// Web信息采集系统的设计与实现), which describes the SkyReach (天达) crawler.
// There a topic is described by sample texts, a page's relevance is the
// similarity of its text to the topic, and a link is rated, before it is
// fetched, by how relevant the words of its anchor text are to the topic;
// the crawler then orders its frontier by combining that link relevance
// with a link-structure score, IPageRank. This package computes the text
// scores; ordering the frontier is the crawler's business.
//
// # Terms
//
// Every text, sample or page, is reduced to index terms by Terms (or an
// Analyzer, which does the same faster when it analyses many texts):
//
//   - A word is a maximal run of letters, digits and combining marks
//     (Unicode's, so "naïve", "Москва" and "ελληνικά" are words). An
//     apostrophe (' or ’) between two letters belongs to the word, so that
//     "don't" is one word and "telescope's" stems like "telescope".
//     Everything else separates words.
//   - Words are lower-cased, and dropped if they are English stop words
//     (about 250 of them, with their contractions), one letter long, all
//     digits (3, 1999, but not mp3) or longer than 64 characters.
//   - Words of Latin script are stemmed by the Snowball English (Porter2)
//     stemmer, so "telescope", "telescopes" and "telescope's" all give the
//     term "telescop". Words of other scripts are kept as they are.
//
// Scripts written without spaces between words (Chinese, Japanese, Thai)
// are not segmented: a run of them is one word, and a run longer than 64
// characters is dropped. The topic and the pages must then be in a language
// written with spaces.
package topic
