// Package linkeval measures trawl's link analysis and focused crawling on
// the synthetic web (package simweb), whose ground truth knows every page's
// true PageRank and topic.
//
// EvalLinkRank crawls a synthetic web with the real jobs and OPIC scoring,
// then builds the LinkDB (invertlinks) and runs linkrank, and reports
// Spearman's rank correlation of each score with the true PageRank over the
// crawled URLs: how well each would order generate's top-N. `trawl eval
// linkrank` runs it.
package linkeval
