package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// reorderArgs moves each command's flags before its positional arguments,
// so that `trawl readseg dump SEG --dir crawl_fetch` works as well as
// `trawl readseg dump --dir crawl_fetch SEG` (urfave/cli stops parsing
// flags at the first argument). Everything after "--" stays as it is.
// Unknown flags are kept in place for the parser to report.
func reorderArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	flags := app.Flags
	cmds := app.Commands
	var pos []string
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if len(a) > 1 && a[0] == '-' {
			out = append(out, a)
			name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !hasValue && takesValue(flags, name) && i+1 < len(args) {
				i++
				out = append(out, args[i])
			}
			continue
		}
		if len(pos) == 0 {
			if sub := findCommand(cmds, a); sub != nil {
				out = append(out, a)
				flags, cmds = sub.Flags, sub.Subcommands
				continue
			}
		}
		pos = append(pos, a)
	}
	out = append(out, pos...)
	return append(out, args[i:]...)
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// takesValue reports whether the flag called name is defined in flags and
// is not a boolean.
func takesValue(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				_, isBool := f.(*cli.BoolFlag)
				return !isBool
			}
		}
	}
	return false
}
