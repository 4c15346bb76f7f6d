// Package simweb generates a deterministic synthetic web with ground truth,
// and serves it on loopback over HTTP and DNS, for trawl's tests,
// benchmarks and revisit evaluation.
//
// # Generation
//
// New(cfg) is pure: the same Config gives the same web on any machine
// (all randomness is counter-based hashing of the seed, see rng.go). A web
// has cfg.Hosts regular hosts h0001.sim.test, ... whose sizes are
// lognormal (σ = 1.4, no host above 15% of the pages), four hostile hosts
// (blackhole, trickle, slowheaders, reset .sim.test) and a few hosts that
// do not resolve (gone-001.sim.test, ...). A host is a home page, a random
// recursive tree of directory pages (5-11% of its pages) and leaves hung
// under directories by preferential attachment (at most 150 per
// directory); 3% of the leaves are PDF documents. Links: home and parent
// navigation, directory listings, then random links — a share
// cfg.SameHostLinks (85%) on the same host, targets drawn from a Zipf law
// over a popularity order of the host's pages (home first), cross-host
// targets from a Zipf law over hosts (bigger hosts more popular) and then
// the home page (40%) or a Zipf-drawn page — so in-degree is heavy-tailed.
// About 2% of random links go to redirects, 1.5% to 404 URLs, 0.3% to
// unresolvable hosts. Page quality is PageRank (damping 0.85, dangling
// rank spread uniformly, power iteration to an L1 change below 1e-8).
//
// Features per page (words, outlinks, inlinks, images, URL depth, bytes)
// are drawn per kind and genre: lognormal words (median 80 for directory
// pages, 200 for home pages, 300-500 for leaves by genre, 1200 for PDFs),
// lognormal random outlinks (median 8-18 for leaves by genre), Poisson
// images correlated with words.
//
// # Change rates
//
// Every content page changes as a Poisson process (see change.go); its rate
// comes from a mixture of six classes with medians 12/day (hourly), 1.5/day
// (daily), 1/6.7 days (weekly), 1/30 days (monthly), 1/365 days (yearly),
// and never (static), log10-normal within a class (σ = 0.3 decades). The
// class probabilities depend on the host's genre and the page's kind
// (classMix in rates.go); a Gaussian copula ties the class to the page's
// feature draws (correlation 0.5 with a score of words and outlinks) and
// to a per-host effect (0.3), so bigger, link-rich pages change more often
// while the table's proportions hold exactly. Within one kind, rates span
// several orders of magnitude; features predict a rate only loosely.
//
// The mix is set to reproduce, page-weighted over the genre shares (news
// 10%, commerce 45%, org 20%, edu/gov 25%), these published findings:
//
//   - Cho and Garcia-Molina, "The Evolution of the Web and Implications for
//     an Incremental Crawler", VLDB 2000 (720,000 pages of 270 sites
//     crawled daily for four months): about 23% of pages change every day
//     (that figure is for .com pages in the summary by Fetterly et al.),
//     about 40% within a week, while .edu and .gov pages are very static,
//     most not changing at all in the four months. Here (measured on
//     webs of 400-1000 hosts, TestRateMix): 22-24% of content pages have a
//     rate of at least 1/day, 37-39% at least 1/week; over 120 days about a
//     third of all pages, and 55-57% of edu/gov pages, are expected not to
//     change. Some summaries put the edu/gov figure above 70%; the figure
//     used here is the more conservative "more than half".
//   - Fetterly, Manasse, Najork and Wiener, "A Large-Scale Study of the
//     Evolution of Web Pages", WWW 2003 (151 million pages, weekly for 11
//     weeks): change frequency depends strongly on the top-level domain,
//     and larger pages change more often and more extensively than smaller
//     ones. Here: the genre sets the class table; the copula makes pages
//     with more words and links faster.
//   - Brewington and Cybenko, "How Dynamic is the Web?", WWW9 2000: the
//     time between changes of a page is well modelled as exponential (a
//     Poisson process per page), with rates spread widely across pages.
//     Here: exactly that process, with a broad multimodal rate
//     distribution.
//   - Ntoulas, Cho and Olston, "What's New on the Web?", WWW 2004 (154
//     sites, weekly for a year): of the pages that persist, about half do
//     not change in a year. That is more static than Cho and Garcia-Molina's
//     daily crawl allows (about 30% unchanged after only four months); the
//     mix follows Cho and Garcia-Molina. Here: 18% of pages never change,
//     12% change less than once a year, and about 26% are expected to stay
//     unchanged for a year.
//
// # Change models
//
// Config.Change selects how rates are drawn, for revisit policies that
// must cope with webs where features say more, less or nothing about a
// page's rate, or where rates do not stay put. Only the rates and the
// change events differ between models; hosts, pages, links and bodies are
// the same web. The models (ChangeModel):
//
//   - default ("" or "default"): the mixture above, exactly the web
//     generated without the field.
//   - strong: copula weight 0.85 on the feature score and 0.3 on the host
//     effect (noise weight √0.1875); within a class σ = 0.15 decades, 80%
//     of the deviation (in standard deviations) from the score.
//   - weak: copula weight 0.15 on the score and 0.1 on the host; σ = 0.3
//     decades within a class, 15% of the deviation from the score.
//   - none: the rate is independent of features, host, kind and genre:
//     every content page draws its class from one pooled mix, the
//     page-weighted average of the class mixes (classMix by genre and
//     kind) over the web's content pages, so the web's overall class
//     shares are those of the default model; the copula latent is pure
//     noise and the rate within a class is log10-normal around the median
//     (σ = 0.3) from noise alone.
//   - drift: the first rate is the default model's (the same draw: the
//     default web's Rate and its events up to the switch), and every
//     content page switches once, at a time uniform in whole seconds
//     within DriftWindow (120 days) of the epoch, to a second class and
//     rate drawn afresh with the default weights from the same genre and
//     kind row, with the same feature score but fresh noise and a fresh
//     host effect (a host's pages shift together). Static pages may start
//     changing and changing pages may stop; a page static on both sides
//     has no switch. The events are the same unit-rate gaps mapped
//     through the inverse of the piecewise-linear cumulative hazard (see
//     change.go), so Version, LastModified, ChangeTimes and the server
//     agree.
//
// PageInfo.RateSwitch (the zero time without a switch), RateAfter and
// ClassAfter (Rate and ChangeClass without a switch) describe the drift;
// Web.RateAt gives the rate at an instant and Web.MeanRate its time
// average over an interval (the expected changes per day). The truth
// files carry the first rate only.
//
// Measured (TestChangeModels, 60 hosts, 4,000 pages, seed 17): the Spearman
// correlation between log words + log outlinks and log rate over changing
// pages is 0.61 under strong, 0.41 by default (and drift, before the
// switch), 0.20 under weak and -0.01 under none. The share of hourly and
// daily pages is 0.58 for home pages, 0.30 for leaves and 0.01 for PDF
// documents by default, and 0.35, 0.28 and 0.22 under none. Under drift
// (TestDrift, seed 23) 3,760 of the 4,000 content pages switch, 452
// static ones start changing and 530 changing ones stop.
//
// # Topics
//
// With Config.Topics = K (2 to MaxTopics, 8) the web is topical, for
// evaluating focused crawlers (harvest rate and recall of a topic); with 0
// none of this exists and the web is exactly the one described above
// (TestWebsUnchanged pins three such webs). Topic k is TopicName(k):
// astronomy, cooking, football, gardening, finance, music, medicine,
// travel, each with its own vocabulary of 140 to 180 real English words
// (topicvocab.go, TopicWords); a few ambiguous words (star, pitch, stock,
// yield, market, ...) belong to two topics. The figures below are measured
// by the tests on webs of 100 hosts, 5,000 pages, 6 topics and the
// default hazards (seeds 1 to 3; where one figure is given, seed 1).
//
// Hosts and pages. Every regular host has a topic. The topics' page
// shares are unequal: topic 0 has 12%, the others share the rest,
// decaying by a factor 0.8 from topic 1 on (for K = 6: 12.0, 26.2, 20.9,
// 16.8, 13.4 and 10.7%). Hosts, biggest first, go to the topic furthest
// below its share. Home and directory pages have their host's topic; 10%
// of the leaves and documents drift to another topic (drawn by share).
// URLs without a body of their own (redirects, 404s, hazards, hostile and
// unresolvable hosts, pages that always answer 500) have no topic
// (PageTopic -1); pages of hosts that are down keep theirs. Measured
// (TestTopicShares): every topic's share within 0.01 of its target
// (12.5, 25.7, 20.7, 16.6, 13.7 and 10.8% of the pages, on 13, 24, 19,
// 18, 14 and 12 hosts), 10.1 to 10.3% of leaves and documents drifted.
//
// Words. A page's body draws a share of its words from its topic's
// vocabulary, lognormal over pages (median 35%, σ = 0.5, within 5-75%);
// its title and headings draw that share plus 30 points (at most 85%); 2%
// of the words come from random other topics; a drifted page also draws
// 0.4 times its share from its host's topic; the rest comes from the
// general pseudo-word stock (with the Latin and Japanese words of those
// hosts, as without topics). Within a vocabulary the i-th word (from 0,
// in an order that depends on the seed) has weight 1/(i+2)^0.7. Measured
// (TestTopicWords): the words of topic k alone make up a median 36-39% of
// an HTML page of topic k (10th percentile 21-24%) and 0.4-0.5% of a page
// of another topic (95th percentile 1.7-2.7%); still the two overlap: the
// richest off-topic pages (drifted pages, with their host's words) reach
// 26-30%, more than the sparsest, shortest on-topic pages. Measured once,
// not by a test: a tf-idf cosine of the HTML pages against five
// TopicSample texts ranks a topic's pages above the others with an area
// under the ROC curve of 0.9985-0.9996 and an R-precision of 95-97%.
//
// Links. Navigation and directory listings are as without topics. A
// random link (after the same shares of 404s, redirects, unresolvable and
// hostile hosts) looks for a page of its source page's topic with
// probability 0.88, else for one of another topic drawn by share: on its
// own host if that has pages of the topic (with probability
// SameHostLinks), else with probability 0.1 a drifted page of the topic on
// another host, else a host of the topic by Zipf popularity and there the
// home page (40%) or a Zipf-drawn page of the topic. Anchor texts are the
// first two to five words of the target's title, as without topics,
// except that 8% of links carry a generic anchor ("read more", "click
// here", "next", ...). Measured (TestTopicLinks, TestAnchorTopics): 85.0 to
// 85.4% of the links between pages with topics stay within a topic (83.4
// to 83.8% of the random ones); 7% of those links lead to the page's own
// home page ("Home"); of the others, the anchor's topic words name the
// target's topic for 80.1-81.2% of links, no topic for 12.8% (generic
// anchors, titles without topic words) and another topic, or two topics
// equally, for 5.9-7.1%.
//
// Tunnels. Some hosts of every topic are tunnel hosts: healthy hosts of at
// least 5 pages, never the topic's biggest, at most 3 per topic, drawn at
// random until they hold 8% of the topic's host pages (never more than
// 20%). They have no drifted pages, and no page of their topic elsewhere
// links into them, nor does any redirect lead there: only pages of other
// topics do (random links across topics, and two extra links per tunnel
// host from pages of other topics), so a crawler that never follows the
// links of off-topic pages cannot find them. BehindTunnel marks their
// pages; TopicSeeds never starts on them; robots.txt always allows their
// home pages. Measured (TestTunnels): 3-20% of a topic's pages lie behind
// tunnels (topic 0: 117, 92 and 118 pages, 15-20%), each tunnel host
// linked from at least 10 pages elsewhere. From TopicSeeds(k, 20, a), a
// breadth-first crawl that follows only the links of pages of topic k (and
// redirects) reaches 80-97% of the topic's pages (topic 0: 80-84%), none
// behind a tunnel; one that follows every link reaches them all.
//
// The topic ground truth: NumTopics, TopicName, TopicWords, PageTopic,
// TopicPages (the pages whose PageTopic is k), BehindTunnel; HostInfo.Topic
// and Tunnel, PageInfo.Topic and BehindTunnel; the truth files' columns
// topic (-1: none), behind_tunnel and tunnel (-1 and false in webs without
// topics), and the metadata simweb.topics. TopicSeeds(k, n, a) gives n
// home page URLs for a focused crawl: half of them (rounded up) of hosts
// of topic k, the rest of other topics, none of a tunnel host, a host that
// is down or broken, or one whose robots.txt forbids "/". TopicSample(k, n)
// gives n descriptions of topic k as a user would write them for a focused
// crawler: two to four sentences of the topic's words joined by "the",
// "of", "and" and other function words. A 5,000-page topical web
// generates in about 40 ms.
//
// # Content
//
// The body of a page at simulated time t is a pure function of (seed,
// page, number of change events up to t) and of the addressing (which
// only spells hosts in links): real markup (title, h1/h2, paragraphs,
// images, lists of links with anchor texts from the target's title);
// absolute, protocol-relative, root-relative and ../ relative links; <base
// href> on 4% of pages; meta robots noindex and/or nofollow on 4.5%;
// windows-1252 and Shift_JIS pages on Latin and Japanese hosts, the charset
// in the Content-Type header, in a <meta>, or both. A change rewrites
// paragraph 0 and those paragraphs whose period divides the version.
// Responses carry Last-Modified (the last change) and ETag per host
// policy, and conditional requests get 304.
//
// # Serving
//
// (*Web).Serve listens on loopback only: one HTTP listener for all hosts
// by Host header (and, with IPPerHost, one per host on its own 127.0.x.y
// and the same port: URLs then name hosts by address so that tools with no
// DNS hook can crawl), and a DNS server (github.com/miekg/dns, UDP and TCP)
// answering A records for the hosts, NXDOMAIN for other names. Per-host
// behaviour: latency (lognormal, median 15 ms, scaled by
// ServeOptions.Latency), keep-alive requests per connection (the server
// sends Connection: close and closes after the N-th), HTTP/1.0 hosts
// (HTTP/1.0 status line, close after every response, half without
// Content-Length), slow hosts, hosts that are down (503), flaky hosts (503
// on a quarter of the simulated days, 5% of requests reset on the others), hosts with pages that answer 500,
// robots.txt (404, allow-all, disallowed directories with Allow
// exceptions, Disallow: /, a 301 to the real file, Crawl-delay on small
// hosts, a BadBot group), 404s, 301/302 redirects (some with relative
// Location), a redirect loop, a 12-hop redirect chain, a calendar spider
// trap, a 5 MiB page, a gzip bomb (4 MiB that inflate to 3 GiB, precomputed
// and streamed), PDF documents and PNG images. The hostile hosts accept
// and never answer, trickle the body at 1 byte/s, trickle the whole
// response (status line included) at 1 byte/s, or reset every connection.
//
// # Simulated clock
//
// Content depends on simulated time, not on the wall clock. The server's
// clock starts at ServeOptions.Start (default the epoch) and stands still
// (ServeOptions.Speed = 0) until the crawl moves it: with Server.SetClock
// in process, or across processes with the control endpoint on the main
// listener, POST http://127.0.0.1:PORT/_simweb/clock?t=RFC3339 (or
// ?advance=7d), Host simweb.control or any IP literal. A crawl driver sets
// it to the same instant it passes to `generate --now`. ServeOptions.Clock
// replaces it with any function.
//
// # Truth and logs
//
// WriteTruth / WriteTruthAddressed write one Parquet row per URL
// (TruthPage: URL, host, kind, status, redirect target, true change rate
// and class, features, PageRank, robots-allowed, meta robots, charset,
// topic); WriteHostTruth one per host. The access log (Server.AccessLog) records
// every request with real and simulated times, host, path, status,
// connection id and request number on the connection; it keeps the latest
// AccessLogLimit entries in memory and can stream JSON lines; Stats
// summarizes it per host for politeness checks (call Server.WaitIdle
// first: a request is logged when its handler returns). Server.DNSLog
// records DNS queries.
package simweb
