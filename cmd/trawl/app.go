package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/hadoop"
)

// Exit statuses.
const (
	exitOK          = 0
	exitNothingToDo = 1
	exitUsage       = 2
	exitFailure     = 3
	exitLocked      = 4
	exitInterrupted = 130
)

// exitError carries an exit status with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is an error in how trawl was called (exit status 2).
func usageErrorf(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Errorf(format, args...)}
}

// withCode gives err the exit status code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code, err}
}

// io holds the process's standard streams and environment, so that the app
// can run in tests without touching the real ones.
type stdio struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            []string
	// prog is the program as the user ran it (os.Args[0]: trawl,
	// ./trawl, bin/trawl), for the commands a job suggests next.
	prog string
}

// program returns the program as the user ran it, "trawl" if unknown.
func (sio *stdio) program() string {
	if sio.prog == "" {
		return "trawl"
	}
	return sio.prog
}

// run runs trawl with args (args[0] is the program name) and returns the
// exit status. Errors are written to stderr as one line; panics are turned
// into errors.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env []string) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "trawl: internal error: %v\n", p)
			code = exitFailure
		}
	}()
	sio := &stdio{stdin: stdin, stdout: stdout, stderr: stderr, env: engineAlias(env)}
	if len(args) > 0 {
		sio.prog = args[0]
	}
	app := newApp(sio)
	err := app.RunContext(ctx, reorderArgs(app, args))
	if err == nil || errors.Is(err, hadoop.ErrDryRun) {
		// A dry run stops its command at the first job, having printed it.
		return exitOK
	}
	code = exitFailure
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if (ctx.Err() != nil && code != exitNothingToDo) || code == exitInterrupted {
		code = exitInterrupted
		fmt.Fprintf(stderr, "trawl: interrupted: %s\n", oneLine(err.Error()))
		return code
	}
	fmt.Fprintf(stderr, "trawl: %s\n", oneLine(err.Error()))
	return code
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}

const appDescription = `trawl crawls the web in rounds, as Apache Nutch does: inject seeds into the
CrawlDB once, then repeat generate → fetch → parse → updatedb. Every job reads
and writes zstd Parquet under the crawl directory (--crawl).

Settings come, lowest to highest precedence, from their defaults, trawl.yaml
(--config, else $TRAWL_CONFIG, else ./trawl.yaml), TRAWL_* environment
variables and flags; ` + "`trawl config`" + ` shows every setting and where its value
came from. Global options may also be given after the command name.

Exit status: 0 success, 1 nothing to do (generate: nothing due; fetch,
parse: no segment needs it; updatedb: its segments are merged already), 2
usage error, 3 failure, 4 the CrawlDB, a segment or (for crawl) the crawl
directory is locked by another job, 130 interrupted (a fetch interrupted
once keeps what it fetched; the next crawl parses and merges it).

Examples:
   trawl crawl --simweb                        # crawl a synthetic web: the demo
   trawl --crawl ./crawl crawl --seeds urls.txt --rounds 3 --agent mybot
   trawl --crawl ./crawl inject seeds.txt
   trawl --crawl ./crawl generate --topN 1000 --max-per-host 50
   trawl --crawl ./crawl fetch --agent mybot
   trawl --crawl ./crawl parse
   trawl --crawl ./crawl updatedb ./crawl/segments/20261121103000
   trawl --crawl ./crawl readdb stats
   trawl config`

// newApp builds the command tree. Nothing in it outlives one run.
func newApp(sio *stdio) *cli.App {
	app := &cli.App{
		Name:                 "trawl",
		Usage:                "a Nutch-style batch web crawler",
		Description:          appDescription,
		Version:              version(),
		Reader:               sio.stdin,
		Writer:               sio.stdout,
		ErrWriter:            sio.stderr,
		Flags:                append(globalFlags(), profileFlags()...),
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		Suggest:              true,
		ExitErrHandler:       func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErrorf("unknown command %q (see trawl --help)", c.Args().First())
			}
			return cli.ShowAppHelp(c)
		},
		Commands: []*cli.Command{
			injectCommand(sio),
			sitemapCommand(sio),
			generateCommand(sio),
			fetchCommand(sio),
			parseCommand(sio),
			updatedbCommand(sio),
			dedupCommand(sio),
			mergedbCommand(sio),
			mergesegsCommand(sio),
			invertlinksCommand(sio),
			linkrankCommand(sio),
			crawlCommand(sio),
			clusterCommand(sio),
			dbscanCommand(sio),
			resolveCommand(sio),
			parsecheckerCommand(sio),
			robotscheckCommand(sio),
			evalCommand(sio),
			readdbCommand(sio),
			readsegCommand(sio),
			readlinkdbCommand(sio),
			warcCommand(sio),
			updatehostdbCommand(sio),
			readhostdbCommand(sio),
			simwebCommand(sio),
			configCommand(sio),
			versionCommand(sio),
			taskCommand(sio),
		},
	}
	app.OnUsageError = onUsageError
	stopProfiling := func() error { return nil }
	app.Before = func(c *cli.Context) (err error) {
		stopProfiling, err = startProfiling(c)
		return err
	}
	app.After = func(*cli.Context) error { return stopProfiling() }
	for _, c := range app.Commands {
		prepare(c)
	}
	return app
}

// prepare adds the global flags to a command, command groups included, and
// its sub-commands (so they may follow any command name) and turns flag parsing errors into usage
// errors rather than printing help on stdout.
func prepare(c *cli.Command) {
	c.OnUsageError = onUsageError
	showSettingDefaults(c)
	if c.Action == nil && len(c.Subcommands) > 0 {
		c.Action = func(ctx *cli.Context) error {
			if ctx.Args().Present() {
				return usageErrorf("unknown %s command %q (see trawl %s --help)", c.Name, ctx.Args().First(), c.Name)
			}
			return cli.ShowSubcommandHelp(ctx)
		}
	}
	if !c.Hidden && c.Name != "version" {
		// Every level, command groups included: `trawl readdb --crawl X
		// stats` as well as `trawl readdb stats --crawl X`.
		c.Flags = append(c.Flags, globalFlags()...)
	}
	for _, s := range c.Subcommands {
		prepare(s)
	}
}

func onUsageError(c *cli.Context, err error, isSub bool) error {
	name := "trawl"
	if c.Command != nil && c.Command.Name != "" {
		name = c.Command.HelpName
	}
	return usageErrorf("%v (see %s --help)", err, name)
}

func version() string {
	v := "(devel)"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Version != "" {
		v = bi.Main.Version
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return v + " " + bi.GoVersion
}

func newLogger(w io.Writer, cfg *config.Config) *slog.Logger {
	var level slog.Level
	switch cfg.String(config.LogLevel) {
	case "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	opts := &slog.HandlerOptions{Level: level}
	if cfg.String(config.LogFormat) == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// envEngine is a shorter name of engine.name's environment variable
// ($TRAWL_ENGINE_NAME), which wins when both are set.
const envEngine = "TRAWL_ENGINE"

// engineAlias returns env with $TRAWL_ENGINE turned into
// $TRAWL_ENGINE_NAME.
func engineAlias(env []string) []string {
	name := config.EnvName(config.EngineName)
	alias, hasAlias, hasName := "", false, false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case envEngine:
			alias, hasAlias = v, true
		case name:
			hasName = true
		}
	}
	if !hasAlias {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, envEngine+"=") {
			out = append(out, kv)
		}
	}
	if !hasName {
		out = append(out, name+"="+alias)
	}
	return out
}
