package main

import (
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/trawl/trawl/config"
	"github.com/trawl/trawl/jobs"
	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/hdfs"
)

func taskCommand(sio *stdio) *cli.Command {
	return &cli.Command{
		Name:   "task",
		Hidden: true,
		Usage:  "run one map or reduce task under Hadoop Streaming",
		Description: `The entry Hadoop Streaming runs: reads the task's input on stdin, writes
map output lines (or reduce side-effect Parquet files) and counters, with the
job named by the trawl_job_name environment variable and rebuilt from
trawl_job_conf. The sort buffer and the spill directory come from the job
configuration that trawl --engine hadoop submits (engine.memory,
engine.hadoop.taskTempDir); engine.tempDir and engine.memory apply when it
does not set them.

Examples:
   hadoop jar hadoop-streaming.jar -mapper 'trawl task --phase map' -reducer 'trawl task --phase reduce' ...`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "phase", Usage: "the task's `PHASE`: map or reduce (required)"},
		},
		Action: action(sio, func(s *session, c *cli.Context) error {
			phase := c.String("phase")
			if phase != "map" && phase != "reduce" {
				return usageErrorf("task: --phase must be map or reduce, not %q", phase)
			}
			env := envMap(sio.env)
			// The job properties trawl --engine hadoop sets win over
			// what the node's environment says: the Go memory limit
			// follows the job's sort buffer, and HDFS is reached as the
			// submitting user.
			if v := env[mapreduce.EnvEngineMemory]; v != "" && env["GOMEMLIMIT"] == "" {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
					s.mem.setCeiling(mapreduce.MemoryLimit(n, 1))
				}
			}
			res := s.resolver
			if u := env[mapreduce.EnvTaskUser]; u != "" {
				res = hdfs.Register(storage.NewResolver(), hdfs.Options{Env: sio.env, User: u, Logger: s.log})
				defer res.Close()
			}
			return withCode(exitFailure, mapreduce.RunStreamingTask(c.Context, jobs.RegistryWith(), phase,
				func(k string) string { return env[k] }, sio.stdin, sio.stdout, sio.stderr,
				mapreduce.WithStorage(res),
				mapreduce.WithTempDir(s.cfg.String(config.EngineTempDir)),
				mapreduce.WithMemoryBudget(s.cfg.Size(config.EngineMemory)),
			))
		}),
	}
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		for i := 0; i < len(kv); i++ {
			if kv[i] == '=' {
				m[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	return m
}
