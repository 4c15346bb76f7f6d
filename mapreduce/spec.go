package mapreduce

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"

	"github.com/trawl/trawl/storage"
)

// A Spec describes one engine job by its settings, as Apache Beam's Go
// SDK describes a DoFn: a struct whose exported fields are everything the
// job's functions need, with a method that builds the job from them. The
// engine sends a spec to a job's tasks as JSON (under ConfSpec in the
// job's Conf); a task decodes it into the same type, found by JobName in a
// Registry (see Register), and builds the same job. No job reads or writes
// configuration keys of its own. ExampleRegister shows the round trip.
//
//	type wordCount struct {
//		Docs, Out string
//		MinLength int
//	}
//
//	func (wordCount) JobName() string { return "wordcount" }
//
//	func (s wordCount) Job() (mapreduce.Runnable, error) {
//		return &mapreduce.Job[int64, Count]{Name: s.JobName(), ...}, nil
//	}
//
// Fields tagged `json:"-"` stay in the process that built the spec (an
// interrupt channel, say): a task elsewhere sees their zero values.
type Spec interface {
	// JobName is the name of the jobs the spec builds, and the name a
	// Registry knows the spec's type by. It must not depend on the
	// spec's fields.
	JobName() string
	// Job builds the job. Its Name must be JobName().
	Job() (Runnable, error)
}

// ConfSpec is the Conf key under which a Spec's JSON travels to tasks.
const ConfSpec = "spec"

// SpecConf returns the Conf that carries s to the tasks of its job: its
// JSON under ConfSpec.
func SpecConf(s Spec) (map[string]string, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("job %s: encode its spec: %w", s.JobName(), err)
	}
	return map[string]string{ConfSpec: string(b)}, nil
}

// DecodeSpec decodes the spec of type T that SpecConf put in conf.
func DecodeSpec[T any](conf map[string]string) (T, error) {
	var s T
	text, ok := conf[ConfSpec]
	if !ok {
		return s, fmt.Errorf("job configuration has no %q entry", ConfSpec)
	}
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		return s, fmt.Errorf("decode the job's spec (%T): %w", s, err)
	}
	return s, nil
}

// Register adds the spec type T to r under T's JobName: a task given a
// Conf made by SpecConf decodes the spec and builds its job.
func Register[T Spec](r Registry) {
	var zero T
	r[zero.JobName()] = func(conf map[string]string) (Runnable, error) {
		s, err := DecodeSpec[T](conf)
		if err != nil {
			return nil, err
		}
		return s.Job()
	}
}

// A Runner runs engine jobs described by specs. *LocalRunner runs them in
// this process; the hadoop package's Submitter runs them as Hadoop
// Streaming jobs of the trawl binary. Drivers take a Runner through an
// Engine and never care which.
type Runner interface {
	// Run runs the job s describes to completion: its outputs are
	// published when Run returns nil, and absent when it fails.
	Run(ctx context.Context, s Spec) (*Result, error)
}

// RunnerFunc adapts a function to a Runner, as http.HandlerFunc adapts
// one to a Handler.
type RunnerFunc func(ctx context.Context, s Spec) (*Result, error)

// Run calls f(ctx, s).
func (f RunnerFunc) Run(ctx context.Context, s Spec) (*Result, error) { return f(ctx, s) }

var _ Runner = (*LocalRunner)(nil)

// Run builds the job s describes and runs it (see RunJob).
func (r *LocalRunner) Run(ctx context.Context, s Spec) (*Result, error) {
	job, err := s.Job()
	if err != nil {
		return nil, fmt.Errorf("job %s: %w", s.JobName(), err)
	}
	return r.RunJob(ctx, job)
}

// Engine is what a driver (a program of one or more engine jobs, such as
// generate or DBSCAN) needs from the engine: where its URIs resolve, what
// runs its jobs, and where its logs go. The zero Engine runs jobs in this
// process on local files.
type Engine struct {
	// Storage resolves URIs; nil means storage.NewResolver() (local paths
	// and file:// URIs).
	Storage Resolver
	// Runner runs the jobs; nil means a LocalRunner over Storage. A
	// LocalRunner without Storage gets this Engine's.
	Runner Runner
	// Log receives the drivers' logs; nil means slog.Default().
	Log *slog.Logger
}

// Resolver returns Storage, or the default resolver if it is nil.
func (e Engine) Resolver() Resolver {
	if e.Storage != nil {
		return e.Storage
	}
	return storage.NewResolver()
}

// Logger returns Log, or slog.Default() if it is nil.
func (e Engine) Logger() *slog.Logger {
	if e.Log != nil {
		return e.Log
	}
	return slog.Default()
}

// Run runs the job s describes on the engine's Runner.
func (e Engine) Run(ctx context.Context, s Spec) (*Result, error) {
	return e.runner().Run(ctx, s)
}

func (e Engine) runner() Runner {
	switch r := e.Runner.(type) {
	case nil:
		return &LocalRunner{Storage: e.Resolver(), Log: e.Log}
	case *LocalRunner:
		if r.Storage == nil {
			cp := *r
			cp.Storage = e.Resolver()
			return &cp
		}
	}
	return e.Runner
}

// Parallelism is how many tasks the Runner runs at once, as far as this
// process knows: a LocalRunner's Parallelism (0: the CPUs), else the CPUs
// (a cluster's size is the cluster's business; drivers use this only to
// size partitions).
func (e Engine) Parallelism() int {
	if r, ok := e.Runner.(*LocalRunner); ok && r.Parallelism > 0 {
		return r.Parallelism
	}
	return runtime.GOMAXPROCS(0)
}
