// Package e2e holds trawl's end-to-end tests: whole crawls of a synthetic
// web (package simweb) served on loopback, checked against the web's ground
// truth and the server's access log: what was fetched, how often, how
// politely, and what the CrawlDB says about it. It has no code of its own.
package e2e
