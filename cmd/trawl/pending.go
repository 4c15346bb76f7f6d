package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// These commands wait for their packages (jobs, crawldb readers, the
// streaming task entry) and are wired as those land.
func notWired(cmd string) error { return fmt.Errorf("%s: not available in this build yet", cmd) }

func (s *session) readdbStats(c *cli.Context) error { return notWired("readdb stats") }
func (s *session) readdbDump(c *cli.Context) error  { return notWired("readdb dump") }
func (s *session) readdbURL(c *cli.Context) error   { return notWired("readdb url") }
func (s *session) readdbTop(c *cli.Context) error   { return notWired("readdb top") }
