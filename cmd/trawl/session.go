package main

import (
	"fmt"
	"log"
	"log/slog"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/hdfs"
)

// session is what a command needs after its flags are parsed: the effective
// settings, the logger and the file systems.
type session struct {
	cfg      *config.Config
	log      *slog.Logger
	io       *stdio
	resolver *storage.Resolver
	// mem is the runtime's memory settings for the command (set by
	// action).
	mem *memoryControl
}

// action wraps a command's body: it loads the settings into a session,
// makes the session's logger the default one for the command's duration
// (see useLogger), sets the memory limit the settings imply (see
// applyMemoryLimit), runs f, and closes the session's file systems.
func action(sio *stdio, f func(s *session, c *cli.Context) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		s, err := newSession(c, sio)
		if err != nil {
			return err
		}
		defer useLogger(s.log)()
		s.mem = applyMemoryLimit(s)
		defer s.mem.restore()
		defer func() {
			if err := s.resolver.Close(); err != nil {
				s.log.Warn("closing file systems", "err", err)
			}
		}()
		return f(s, c)
	}
}

// newSession loads the settings (defaults, trawl.yaml, environment, the
// flags set on the command line in c and its parents) and makes the logger.
func newSession(c *cli.Context, sio *stdio) (*session, error) {
	var file string
	for _, ctx := range c.Lineage() {
		if ctx.App == nil {
			continue // the context above the root
		}
		if isSetHere(ctx, "config") {
			file = ctx.String("config")
			break
		}
	}
	cfg, err := config.Load(config.LoadOptions{
		File:  file,
		Env:   sio.env,
		Flags: overrides(c),
	})
	if err != nil {
		return nil, usageErrorf("%w", err)
	}
	log := newLogger(sio.stderr, cfg)
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	return &session{cfg: cfg, log: log, io: sio, resolver: hdfs.Register(storage.NewResolver(), hdfs.Options{Env: sio.env, Logger: log})}, nil
}

// useLogger makes l the default logger, so that every log line of the
// command honours --log-level and --log-format: those of packages that log
// through slog.Default() (crawldb's recovery warnings, components built
// without a logger) and those of the standard log package, which
// slog.SetDefault routes to l's handler. It returns a function that puts
// back the previous default logger and the log package's output, flags and
// prefix, so that commands run one after another in one process (tests)
// stay independent.
func useLogger(l *slog.Logger) (restore func()) {
	prev := slog.Default()
	w, flags, prefix := log.Writer(), log.Flags(), log.Prefix()
	slog.SetDefault(l)
	log.SetPrefix("")
	return func() {
		slog.SetDefault(prev)
		log.SetOutput(w)
		log.SetFlags(flags)
		log.SetPrefix(prefix)
	}
}

// crawl returns the crawl directory's URI.
func (s *session) crawl() string { return s.cfg.String(config.CrawlDir) }

// crawlPath returns the URI of elem... under the crawl directory.
func (s *session) crawlPath(elem ...string) string { return storage.Join(s.crawl(), elem...) }

// resolve returns the file system and path of uri.
func (s *session) resolve(uri string) (storage.FS, string, error) {
	fsys, p, err := s.resolver.Resolve(uri)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", uri, err)
	}
	return fsys, p, nil
}

// segmentURI turns a SEGMENT argument into a URI: a bare name (no path
// separator) that exists under the crawl's segments/ directory names that
// segment; anything else is a path or URI as given.
func (s *session) segmentURI(arg string) (string, error) {
	if arg == "" {
		return "", usageErrorf("empty segment name")
	}
	if !strings.ContainsAny(arg, `/\`) {
		uri := s.crawlPath("segments", arg)
		fsys, p, err := s.resolve(uri)
		if err != nil {
			return "", err
		}
		ok, err := storage.Exists(fsys, p)
		if err != nil {
			return "", err
		}
		if ok {
			return uri, nil
		}
	}
	fsys, p, err := s.resolve(arg)
	if err != nil {
		return "", err
	}
	ok, err := storage.Exists(fsys, p)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", fmt.Errorf("segment %s does not exist (nor %s)", arg, s.crawlPath("segments", arg))
	}
	return arg, nil
}
