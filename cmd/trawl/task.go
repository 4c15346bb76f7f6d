package main

import (
	"github.com/urfave/cli/v2"
)

func taskCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:   "task",
		Hidden: true,
		Usage:  "run one map or reduce task under Hadoop Streaming",
		Description: `The entry Hadoop Streaming runs: reads the task's input on stdin, writes
map output lines (or reduce side-effect Parquet files) and counters, with the
job named by the trawl_job_name environment variable and rebuilt from
trawl_job_conf.

Examples:
   hadoop jar hadoop-streaming.jar -mapper 'trawl task --phase map' -reducer 'trawl task --phase reduce' ...`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "`map|reduce`", Required: true},
		},
		Action: func(c *cli.Context) error {
			return runTask(c, sio)
		},
	}
}
