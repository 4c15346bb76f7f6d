// Package parser turns a fetched page (segment.Content) into what a crawl
// learns from it: outlinks with anchor texts, the title, the visible text,
// meta robots directives, a meta refresh, the canonical URL, page features
// and two signatures. It plays the part of Apache Nutch's parse-html and
// parse-text plugins (HtmlParser, DOMContentUtils, HTMLMetaProcessor), the
// link handling of ParseOutputFormat, and MD5Signature /
// TextProfileSignature.
//
// # Content types
//
// The media type comes from Content.ContentType (or the Content-Type
// header); when it is missing or application/octet-stream it is sniffed
// from the body (net/http.DetectContentType). text/html,
// application/xhtml+xml and application/vnd.wap.xhtml+xml are parsed as
// HTML, text/plain as plain text (its text, no links), application/pdf as
// PDF (the text of its pages, the title from its information dictionary,
// the URIs of its link annotations as outlinks; github.com/ledongthuc/pdf
// reads the file, within bounds on pages, decoded content and reads that
// keep a hostile file as cheap as a large page: see MaxPDFPages). Types
// lists them; Options.Types narrows them (to store PDFs without paying
// for their text, say). Anything else fails with ErrUnsupportedType. Parse never
// panics: a panic while parsing one page is recovered and returned as an
// error for that page.
//
// # Character encoding
//
// In the order the HTML standard gives (Nutch's EncodingDetector weighs
// similar clues): a byte order mark; the charset parameter of the
// Content-Type; a <meta charset> or <meta http-equiv=Content-Type> within
// the first 4096 bytes (the standard's prescan looks at 1024, Nutch at
// 2000; later declarations are common enough to look further); UTF-8 if
// the whole body is valid UTF-8; else windows-1252 (Nutch's
// parser.character.encoding.default). Labels are the WHATWG ones
// (golang.org/x/net/html/charset), so iso-8859-1 means windows-1252 and
// Shift_JIS, EUC-JP, GBK, Big5 and the rest decode to UTF-8. A declared
// UTF-16 in a <meta> means UTF-8, as the standard says. Result.Charset names
// the encoding used.
//
// # HTML
//
// The page is read as golang.org/x/net/html's tokenizer reads it (lenient:
// any byte sequence parses; no tree is built, so deeply nested or unclosed
// markup costs linear time and constant stack). Most pages are read by a
// scanner of the parser's own in one pass over their bytes, which splits
// text, tags, attributes, comments and raw text exactly where the
// tokenizer does; a page with anything it does not read (a NUL byte, an
// attribute value with a named character reference other than &amp; &lt;
// &gt; &quot; &apos; &nbsp;, a <script> holding
// "<!--", markup cut off by the end of the page, ...) is read again with
// the tokenizer, so the result is the same either way.
//
// Text: the visible text is the text of the document outside <head>
// elements (title, style, script), <script>, <style>, <noscript>,
// <template>, <iframe>, <noembed>, <noframes> and comments. Whitespace runs
// collapse to one space. Unlike Nutch, which joins every text node with a
// space (so "<b>W</b>ord" gives "W ord"), a space is put only between
// block-level elements and at <br>, so inline markup does not split words.
// Nutch puts the title into the text; here the title is only in
// Result.Title, and Text is what a reader of the page sees. Words
// (Features.Words) counts the whitespace-separated tokens of Text.
//
// Title: the text of the first <title> not inside <svg> or <math>.
//
// Links, in document order, from a[href], area[href], frame[src],
// iframe[src] and link[href] when its rel names a navigational relation
// (alternate, canonical, next, prev, previous, first, last, up, home, index,
// start, contents, author, archives). Nutch's DOMContentUtils also takes
// img[src], script[src], every link[href] (stylesheets, icons) and, with
// parser.html.form.use_action, form[action]; those are resources, not
// pages, and are left out here (Nutch's suffix filter drops most of them
// later anyway). Links inside <template> are inert and left out. Like
// Nutch, a link whose rel holds "nofollow" is left out. The anchor text
// of a[href] is its text (whitespace collapsed, at most MaxAnchorLength
// runes; Nutch's db.max.anchor.length is 100), or, when the anchor has no
// text, the alt text of an image inside it (Nutch gives an empty anchor);
// area takes its alt attribute; frame, iframe and link have no anchor.
//
// Each link is resolved against the first <base href> (itself resolved
// against the page, as browsers do; Nutch only honours an absolute one)
// or else the page's base URL (Content.BaseURL, the URL after redirects, or
// Content.URL), and normalized (urlutil). Then, in Nutch's
// ParseOutputFormat order: a link to the page itself is dropped; with
// IgnoreExternalLinks links to another host (registered domain when Scope
// is ScopeDomain) are dropped, with IgnoreInternalLinks links to the same
// host (domain); links outside Scope are dropped; Filter is applied; the
// first MaxOutlinks surviving links are kept (Nutch's
// db.max.outlinks.per.page, 100). Unlike Nutch, a target is kept once:
// the first link to it, with the first non-empty anchor among the links to
// it seen so far. Nutch keeps every duplicate in parse_data and emits a
// CrawlDB update per duplicate, so a page linking twice to a URL passes it
// twice the OPIC cash and counts twice against the cap; here every
// distinct target gets one share, and Features.Outlinks counts distinct
// targets.
//
// Meta directives: <meta name=robots> with noindex, nofollow, none (both),
// noarchive / nocache; the X-Robots-Tag response header is honoured the
// same way (entries without a user-agent prefix). noindex empties Text and
// Title (Nutch's behaviour; the features and signatures still describe the
// page); nofollow empties Outlinks (Nutch's behaviour).
//
// Meta refresh (<meta http-equiv=refresh content="N; url=U">, the standard's
// lenient syntax) sets RefreshURL and RefreshDelay. Nutch treats a refresh
// as a redirect (ParseStatus SUCCESS_REDIRECT, the target becomes a linked
// CrawlDB entry whatever nofollow says); here the target, when it passes the
// link checks, is the first outlink (so the cap never drops it) and is also
// reported as Redirect, which the parse job turns into a CrawlDB link without
// cash when nofollow keeps it out of Outlinks.
//
// <link rel=canonical href> sets Canonical (resolved and normalized, not
// filtered). Other <meta name|property=... content=...> go into Meta (at
// most MaxMeta entries, lower-case names, values cut at 1024 bytes), with
// "charset" set to the encoding used.
//
// # Features
//
// Words (tokens of the visible text, counted even when noindex drops the
// text), Outlinks (after deduplication, filters and the cap), Images (<img>
// elements outside <template>), Depth (urlutil.Depth of the URL), Bytes
// (the body's length). Inlinks are left 0: updatedb counts them.
//
// # Signatures
//
// Both signatures digest the page's "signature text", the title and the
// visible text joined by a space (what Nutch's parse text holds), computed
// whether or not noindex drops the text. When that text is empty they
// digest the raw body, as Nutch's signatures fall back to MD5Signature.
//
//   - MD5Signature: the MD5 of the signature text. Nutch's MD5Signature
//     digests the raw bytes, so any markup change (a counter, a session id
//     in a link) counts as a change; digesting the text ignores those.
//   - TextProfileSignature: Nutch's algorithm (see TextProfile): tokens of
//     letters and digits, lower-cased, longer than two runes, counted;
//     counts rounded down to a multiple of QUANT = round(maxFreq * 0.01)
//     (at least 2 when some token repeats); tokens below QUANT dropped; the
//     rest sorted by decreasing count then by token; the MD5 of the lines
//     "token count". Small edits (a word here and there, punctuation, case,
//     markup) leave it unchanged; rewriting a paragraph changes it.
//
// Nothing here has mutable package state; a Parser is safe for concurrent
// use.
package parser
