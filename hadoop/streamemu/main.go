//go:build unix

package streamemu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The environment variables the emulator reads (never trawl).
const (
	// EnvFailFirstAttempts, set to 1, makes the first attempt of every
	// task fail after doing part of its work: a map's process is killed
	// once it has written output (or exited), a reduce's once it has
	// read half its input. The second attempt runs normally.
	EnvFailFirstAttempts = "STREAMEMU_FAIL_FIRST_ATTEMPTS"
	// EnvInvocationLog names a file the emulator appends one JSON line
	// to per `hadoop jar` run (see Invocation).
	EnvInvocationLog = "STREAMEMU_LOG"
	// EnvStateDir is the emulator's directory: running jobs' pid files,
	// task working directories and logs. Empty means
	// $TMPDIR/trawl-streamemu.
	EnvStateDir = "STREAMEMU_STATE"
	// EnvSlots is how many task attempts run at once (default 2).
	EnvSlots = "STREAMEMU_SLOTS"
)

// Version is what `hadoop version` prints first.
const Version = "Hadoop 3.3.6"

// Main runs the emulated hadoop (or mapred) command with args (without
// the program name) and returns its exit status:
//
//	hadoop jar JAR [GENERIC OPTIONS] STREAMING OPTIONS
//	hadoop job -kill JOB_ID     (also: mapred job -kill JOB_ID)
//	hadoop version
//
// env is the command's environment ("KEY=value"). Cancelling ctx (the
// command's SIGTERM or SIGINT) kills a running job as `job -kill` does.
func Main(ctx context.Context, args, env []string, stdout, stderr io.Writer) int {
	e := envMap(env)
	if len(args) == 0 {
		fmt.Fprintln(stderr, "Usage: hadoop [jar JAR ... | job -kill JOB_ID | version] (trawl's Hadoop Streaming emulator)")
		return 1
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, Version)
		fmt.Fprintln(stdout, "This is trawl's emulation of hadoop jar hadoop-streaming.jar, not Hadoop.")
		return 0
	case "job":
		return killJob(args[1:], e, stdout, stderr)
	case "jar":
		o, err := parseJar(args[1:])
		if err != nil {
			fmt.Fprintln(stderr, err)
			fmt.Fprintln(stderr, "Try -help for more information")
			fmt.Fprintln(stderr, "Streaming Command Failed!")
			return 1
		}
		r, err := newRun(o, e, stdout, stderr)
		if err != nil {
			logf(stderr, "ERROR", "streaming.StreamJob", "Error Launching job : %v", err)
			fmt.Fprintln(stderr, "Streaming Command Failed!")
			logInvocation(e, o, "", 1, 0)
			return 1
		}
		code := r.run(ctx)
		logInvocation(e, o, r.jobID, code, r.failedAttempts())
		return code
	}
	fmt.Fprintf(stderr, "emulator: unsupported command %q (the emulator runs jar, job -kill and version)\n", args[0])
	return 1
}

// options are a `hadoop jar` command's.
type options struct {
	jar     string
	conf    map[string]string
	files   []string
	inputs  []string
	output  string
	mapper  string
	reducer string
	inFmt   string
	part    string
	cmdenv  []string
	args    []string
}

// parseJar parses the arguments after "jar": the jar, Hadoop's generic
// options, then the streaming options. As in Hadoop, a generic option
// after the first streaming option is an error.
func parseJar(args []string) (*options, error) {
	o := &options{conf: map[string]string{}, args: args}
	if len(args) == 0 {
		return nil, errors.New("RunJar jarFile [mainClass] args...")
	}
	o.jar = args[0]
	if st, err := os.Stat(o.jar); err != nil || st.IsDir() {
		return nil, fmt.Errorf("JAR does not exist or is not a normal file: %s", o.jar)
	}
	if !strings.Contains(filepath.Base(o.jar), "streaming") {
		return nil, fmt.Errorf("emulator: %s is not a hadoop-streaming jar (the emulator runs streaming jobs only)", o.jar)
	}
	rest := args[1:]
	generic := true
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		// next takes the option's argument.
		next := func() (string, error) {
			if i+1 >= len(rest) {
				return "", fmt.Errorf("Missing argument for option: %s", strings.TrimPrefix(a, "-"))
			}
			i++
			return rest[i], nil
		}
		var err error
		switch {
		case a == "-D" || (strings.HasPrefix(a, "-D") && len(a) > 2):
			if !generic {
				return nil, fmt.Errorf("Unrecognized option: %s (generic options such as -D go before the streaming options)", a)
			}
			err = o.define(strings.TrimPrefix(a, "-D"), next)
		case a == "-files":
			if !generic {
				return nil, fmt.Errorf("Unrecognized option: %s (generic options such as -files go before the streaming options)", a)
			}
			var v string
			if v, err = next(); err == nil {
				o.files = append(o.files, strings.Split(v, ",")...)
			}
		case a == "-libjars" || a == "-archives" || a == "-conf" || a == "-fs" || a == "-jt":
			return nil, fmt.Errorf("emulator: the generic option %s is not supported", a)
		default:
			generic = false
			err = o.streamingOption(a, next)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	return o, nil
}

// define reads a -D option: KEY=VALUE in kv, or if kv is empty in the
// next argument.
func (o *options) define(kv string, next func() (string, error)) error {
	if kv == "" {
		v, err := next()
		if err != nil {
			return err
		}
		kv = v
	}
	k, v, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("bad -D option %q: want KEY=VALUE", kv)
	}
	o.conf[k] = v
	return nil
}

// streamingOption reads streaming option a (and its argument, from next).
func (o *options) streamingOption(a string, next func() (string, error)) error {
	var v string
	var err error
	switch a {
	case "-input", "-output", "-mapper", "-reducer", "-inputformat", "-partitioner", "-numReduceTasks", "-cmdenv":
		if v, err = next(); err != nil {
			return err
		}
	case "-verbose":
		return nil
	case "-combiner", "-outputformat", "-file", "-jobconf", "-lazyOutput", "-background", "-io", "-mapdebug", "-reducedebug", "-inputreader":
		return fmt.Errorf("emulator: the streaming option %s is not supported", a)
	default:
		return fmt.Errorf("Unrecognized option: %s", a)
	}
	switch a {
	case "-input":
		o.inputs = append(o.inputs, strings.Split(v, ",")...)
	case "-output":
		o.output = v
	case "-mapper":
		o.mapper = v
	case "-reducer":
		o.reducer = v
	case "-inputformat":
		o.inFmt = v
	case "-partitioner":
		o.part = v
	case "-numReduceTasks":
		o.conf["mapreduce.job.reduces"] = v
	case "-cmdenv":
		o.cmdenv = append(o.cmdenv, v)
	}
	return nil
}

// check checks that the required streaming options are there.
func (o *options) check() error {
	switch {
	case len(o.inputs) == 0:
		return errors.New("Required argument: -input <name>")
	case o.output == "":
		return errors.New("Required argument: -output")
	case o.mapper == "":
		return errors.New("emulator: -mapper is required (the emulator has no identity mapper)")
	}
	return nil
}

// failedAttempts counts the job's failed task attempts.
func (r *run) failedAttempts() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fw.failed[0] + r.fw.failed[1]
}

// localPath turns a Hadoop path into a local one: file:///p, file:/p or
// an absolute or relative path. Other schemes (hdfs) are not emulated.
func localPath(p string) (string, error) {
	switch {
	case strings.HasPrefix(p, "file://"):
		rest := strings.TrimPrefix(p, "file://")
		if !strings.HasPrefix(rest, "/") {
			return "", fmt.Errorf("emulator: %s: file URI with a host", p)
		}
		return filepath.Clean(rest), nil
	case strings.HasPrefix(p, "file:"):
		return filepath.Clean(strings.TrimPrefix(p, "file:")), nil
	case strings.Contains(p, "://"):
		return "", fmt.Errorf("emulator: %s: only local paths (file:) are emulated, not HDFS or other file systems", p)
	}
	return filepath.Abs(p)
}

// killJob is `job -kill JOB_ID`: it signals the emulator running the job
// (found by its pid file), which kills its tasks.
func killJob(args []string, e map[string]string, stdout, stderr io.Writer) int {
	if len(args) != 2 || args[0] != "-kill" {
		fmt.Fprintln(stderr, "emulator: job supports only -kill JOB_ID")
		return 1
	}
	id := args[1]
	data, err := os.ReadFile(filepath.Join(stateDir(e), "jobs", id+".pid"))
	if err != nil {
		fmt.Fprintf(stdout, "Could not find job %s\n", id)
		return 255
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		fmt.Fprintf(stderr, "emulator: bad pid file of %s\n", id)
		return 1
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		fmt.Fprintf(stdout, "Could not find job %s\n", id)
		return 255
	}
	fmt.Fprintf(stdout, "Killed job %s\n", id)
	return 0
}

func stateDir(e map[string]string) string {
	if d := e[EnvStateDir]; d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "trawl-streamemu")
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// logf prints a line in the format of Hadoop 3's console log.
func logf(w io.Writer, level, logger, format string, args ...any) {
	fmt.Fprintf(w, "%s %s %s: %s\n", time.Now().Format("2006-01-02 15:04:05,000"), level, logger, fmt.Sprintf(format, args...))
}
