package hadoop

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnvHadoopHome and EnvStreamingJar are the environment variables Locate
// reads.
const (
	EnvHadoopHome   = "HADOOP_HOME"
	EnvStreamingJar = "HADOOP_STREAMING_JAR"
)

// streamingJarGlob is where a Hadoop distribution keeps the streaming jar,
// under its home.
const streamingJarGlob = "share/hadoop/tools/lib/hadoop-streaming-*.jar"

// Location is where Locate found the hadoop command and the streaming
// jar.
type Location struct {
	// Hadoop is the hadoop command.
	Hadoop string
	// StreamingJar is the hadoop-streaming jar.
	StreamingJar string
}

// Locate finds the hadoop command ($HADOOP_HOME/bin/hadoop, else hadoop on
// the PATH through lookPath) and the streaming jar (jarSetting, the value
// of the engine.hadoop.streamingJar setting; else $HADOOP_STREAMING_JAR;
// else the newest $HADOOP_HOME/share/hadoop/tools/lib/hadoop-streaming-*.jar).
// getenv reads the environment. The error of a failed search names every
// place it looked.
func Locate(getenv func(string) string, lookPath func(string) (string, error), jarSetting string) (Location, error) {
	var loc Location
	home := getenv(EnvHadoopHome)
	var errs []error
	if home != "" {
		p := filepath.Join(home, "bin", "hadoop")
		if isExecutable(p) {
			loc.Hadoop = p
		} else {
			errs = append(errs, fmt.Errorf("no executable %s ($%s/bin/hadoop)", p, EnvHadoopHome))
		}
	}
	if loc.Hadoop == "" {
		p, err := lookPath("hadoop")
		if err != nil {
			if home == "" {
				errs = append(errs, fmt.Errorf("$%s is not set and there is no hadoop command on the PATH", EnvHadoopHome))
			} else {
				errs = append(errs, errors.New("no hadoop command on the PATH either"))
			}
			return loc, fmt.Errorf("hadoop engine: %w", errors.Join(errs...))
		}
		loc.Hadoop = p
	}
	jar, err := findJar(getenv, jarSetting, home)
	if err != nil {
		return loc, fmt.Errorf("hadoop engine: %w", err)
	}
	loc.StreamingJar = jar
	return loc, nil
}

// findJar finds the streaming jar (see Locate).
func findJar(getenv func(string) string, setting, home string) (string, error) {
	check := func(p, from string) (string, error) {
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("the streaming jar %s (%s): %w", p, from, err)
		}
		if st.IsDir() {
			return "", fmt.Errorf("the streaming jar %s (%s) is a directory", p, from)
		}
		return p, nil
	}
	if setting != "" {
		return check(setting, "setting engine.hadoop.streamingJar")
	}
	if p := getenv(EnvStreamingJar); p != "" {
		return check(p, "$"+EnvStreamingJar)
	}
	if home != "" {
		matches, _ := filepath.Glob(filepath.Join(home, streamingJarGlob))
		if len(matches) > 0 {
			sort.Strings(matches)
			return matches[len(matches)-1], nil
		}
	}
	where := "$" + EnvHadoopHome + " is not set"
	if home != "" {
		where = "none matches " + filepath.Join(home, streamingJarGlob)
	}
	return "", fmt.Errorf("no hadoop-streaming jar: set the setting engine.hadoop.streamingJar, or $%s, or $%s so that %s holds it (%s)",
		EnvStreamingJar, EnvHadoopHome, "$"+EnvHadoopHome+"/"+streamingJarGlob, where)
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// mapredCommand is the command that kills a running job: mapred beside
// hadoop, else hadoop itself (its deprecated "job" subcommand).
func mapredCommand(hadoop string) []string {
	if dir := filepath.Dir(hadoop); dir != "." || strings.ContainsRune(hadoop, filepath.Separator) {
		if p := filepath.Join(dir, "mapred"); isExecutable(p) {
			return []string{p}
		}
	}
	return []string{hadoop}
}
