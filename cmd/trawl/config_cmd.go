package main

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
)

func configCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:      "config",
		Usage:     "print every setting's effective value and where it came from",
		ArgsUsage: "[NAME...]",
		Description: `Prints the effective value of every setting (or of the settings named) and
its source: default, file FILE:LINE, env VARIABLE or flag --FLAG. Sources,
lowest to highest: defaults < trawl.yaml < TRAWL_* environment < flags.
--format yaml writes a complete trawl.yaml with each setting's doc as a comment;
--docs adds each setting's type, default and description to the table.
The other commands' setting flags (--topN, ...) are accepted too, to show
their effect.

Examples:
   trawl config
   trawl config --docs
   trawl config generate.topN crawl
   TRAWL_GENERATE_TOP_N=500 trawl config generate.topN
   trawl config --format yaml > trawl.yaml
   trawl --config prod.yaml config --format json`,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "format", Value: "table", Usage: "output `table|yaml|json`"},
			&cli.BoolFlag{Name: "docs", Usage: "with the table: add type, default and description"},
		}, commandSettingFlags()...),
		Action: action(sio, func(s *session, c *cli.Context) error {
			values := s.cfg.Values()
			if c.Args().Present() {
				var sel []config.Value
				for _, name := range c.Args().Slice() {
					v, ok := s.cfg.Get(name)
					if !ok {
						return usageErrorf("config: unknown setting %q", name)
					}
					sel = append(sel, v)
				}
				values = sel
			}
			out := sio.stdout
			switch c.String("format") {
			case "table":
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				if c.Bool("docs") {
					fmt.Fprintln(tw, "NAME\tVALUE\tSOURCE\tTYPE\tDEFAULT\tDESCRIPTION")
				} else {
					fmt.Fprintln(tw, "NAME\tVALUE\tSOURCE")
				}
				for _, v := range values {
					if c.Bool("docs") {
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", v.Name, show(v.Raw), v.Source, v.Kind, show(v.Default), v.Doc)
					} else {
						fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, show(v.Raw), v.Source)
					}
				}
				return tw.Flush()
			case "yaml":
				_, err := out.Write(s.cfg.YAML())
				return err
			case "json":
				type row struct {
					Name    string   `json:"name"`
					Type    string   `json:"type"`
					Value   string   `json:"value"`
					Source  string   `json:"source"`
					Default string   `json:"default"`
					Choices []string `json:"choices,omitempty"`
					Doc     string   `json:"doc"`
				}
				rows := make([]row, 0, len(values))
				for _, v := range values {
					rows = append(rows, row{v.Name, v.Kind.String(), v.Raw, v.Source.String(), v.Default, v.Choices, v.Doc})
				}
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			return usageErrorf("config: --format must be table, yaml or json, not %q", c.String("format"))
		}),
	}
}

// show makes an empty value visible in a table.
func show(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

func versionCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print trawl's version",
		Description: `Prints the module version, the VCS revision when the binary was built from
a checkout with VCS stamping, and the Go version.

Examples:
   trawl version`,
		Action: func(c *cli.Context) error {
			_, err := fmt.Fprintf(sio.stdout, "trawl %s\n", version())
			return err
		},
	}
}
