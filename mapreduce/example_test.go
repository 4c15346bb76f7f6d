package mapreduce_test

import (
	"context"
	"fmt"
	"iter"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawl/trawl/mapreduce"
	"github.com/trawl/trawl/parquetio"
	"github.com/trawl/trawl/storage"
)

// Doc is the examples' input record: a row of a Parquet file.
type Doc struct {
	ID   int64  `parquet:"id"`
	Text string `parquet:"text"`
}

// Count is the word counts' output record.
type Count struct {
	Word string `parquet:"word"`
	N    int64  `parquet:"n"`
}

// writeDocs writes docs as the Parquet file path.
func writeDocs(path string, docs ...string) {
	rows := make([]Doc, len(docs))
	for i, d := range docs {
		rows[i] = Doc{ID: int64(i), Text: d}
	}
	if err := parquetio.WriteFile(storage.NewLocal(), path, rows); err != nil {
		log.Fatal(err)
	}
}

// printCounts prints the records of the part files of the output dir.
func printCounts(dir string) {
	parts, err := parquetio.PartFiles(storage.NewLocal(), dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range parts {
		counts, err := parquetio.ReadAll[Count](storage.NewLocal(), p)
		if err != nil {
			log.Fatal(err)
		}
		for _, c := range counts {
			fmt.Println(c.Word, c.N)
		}
	}
}

// sum is the word counts' reduce (and combine) function.
func sum(_ *mapreduce.Task, word string, ns iter.Seq[int64], out func(Count)) error {
	c := Count{Word: word}
	for n := range ns {
		c.N += n
	}
	out(c)
	return nil
}

// A word count on the local runner: the map function emits (word, 1) for
// every word of a Doc, the reduce function sums a word's ones, and the
// job writes the counts, sorted by word, as Parquet part files.
func Example() {
	dir, err := os.MkdirTemp("", "wordcount")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	docs := filepath.Join(dir, "docs.parquet")
	writeDocs(docs, "the quick brown fox", "jumps over the lazy dog", "the end")

	job := &mapreduce.Job[int64, Count]{
		Name: "wordcount",
		Inputs: []mapreduce.Input[int64]{
			mapreduce.From(docs, func(t *mapreduce.Task, d Doc, emit mapreduce.Emit[int64]) error {
				for _, w := range strings.Fields(d.Text) {
					emit(w, 1)
				}
				return nil
			}),
		},
		Reduce:  sum,
		Outputs: []mapreduce.Output[Count]{mapreduce.Write[Count](filepath.Join(dir, "counts"))},
	}
	runner := &mapreduce.LocalRunner{TempDir: dir, Log: slog.New(slog.DiscardHandler)}
	res, err := mapreduce.Run(context.Background(), runner, job)
	if err != nil {
		log.Fatal(err)
	}
	printCounts(filepath.Join(dir, "counts"))
	fmt.Println("records read:", res.Counters.Get("trawl", "map_input_records"))
	// Output:
	// brown 1
	// dog 1
	// end 1
	// fox 1
	// jumps 1
	// lazy 1
	// over 1
	// quick 1
	// the 3
	// records read: 3
}

// wordCount is the spec of a word count job: its exported fields are its
// whole configuration.
type wordCount struct {
	// Docs is the input: a Parquet file of Docs, or a directory of them.
	Docs string
	// Out is the output directory.
	Out string
	// MinLength is the length of the shortest word counted; zero counts
	// every word.
	MinLength int
}

// JobName names the jobs the spec builds, and the spec's type in a
// Registry.
func (wordCount) JobName() string { return "wordcount" }

// Job builds the job from the spec's fields alone.
func (s wordCount) Job() (mapreduce.Runnable, error) {
	if s.MinLength < 0 {
		return nil, fmt.Errorf("negative MinLength %d", s.MinLength)
	}
	return &mapreduce.Job[int64, Count]{
		Name: s.JobName(),
		Inputs: []mapreduce.Input[int64]{
			mapreduce.From(s.Docs, func(t *mapreduce.Task, d Doc, emit mapreduce.Emit[int64]) error {
				for _, w := range strings.Fields(d.Text) {
					if len(w) >= s.MinLength {
						emit(w, 1)
					}
				}
				return nil
			}),
		},
		Reduce:  sum,
		Outputs: []mapreduce.Output[Count]{mapreduce.Write[Count](s.Out)},
	}, nil
}

// A spec travels to a job's tasks as JSON: SpecConf puts it in the job's
// Conf, and a task decodes it with the type Register put in its Registry
// under the spec's JobName, then builds the same job.
func ExampleRegister() {
	reg := mapreduce.Registry{}
	mapreduce.Register[wordCount](reg)

	spec := wordCount{Docs: "hdfs://nn/crawl/docs", Out: "hdfs://nn/crawl/counts", MinLength: 4}
	conf, err := mapreduce.SpecConf(spec)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(conf[mapreduce.ConfSpec])

	// What a task does with the Conf it was given: the same spec, and
	// from it the same job.
	decoded, err := mapreduce.DecodeSpec[wordCount](conf)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("same spec:", decoded == spec)
	job, err := reg[spec.JobName()](conf)
	if err != nil {
		log.Fatal(err)
	}
	info, err := mapreduce.Describe(job)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Name, info.Inputs, info.Outputs)
	// Output:
	// {"Docs":"hdfs://nn/crawl/docs","Out":"hdfs://nn/crawl/counts","MinLength":4}
	// same spec: true
	// wordcount [hdfs://nn/crawl/docs] [hdfs://nn/crawl/counts]
}

// A driver runs specs on an Engine and does not care which Runner it
// has. This one's Runner rebuilds every job from its Conf through the
// Registry, as a Hadoop Streaming task does (the Conf reaches the task
// encoded in an environment variable), and runs it on the local runner.
func ExampleRunnerFunc() {
	dir, err := os.MkdirTemp("", "wordcount")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	writeDocs(filepath.Join(dir, "docs.parquet"), "the quick brown fox", "jumps over the lazy dog")

	reg := mapreduce.Registry{}
	mapreduce.Register[wordCount](reg)
	local := &mapreduce.LocalRunner{TempDir: dir, Log: slog.New(slog.DiscardHandler)}
	viaConf := mapreduce.RunnerFunc(func(ctx context.Context, s mapreduce.Spec) (*mapreduce.Result, error) {
		conf, err := mapreduce.SpecConf(s)
		if err != nil {
			return nil, err
		}
		taskConf, err := mapreduce.DecodeConf(mapreduce.EncodeConf(conf))
		if err != nil {
			return nil, err
		}
		job, err := reg[s.JobName()](taskConf)
		if err != nil {
			return nil, err
		}
		return local.RunJob(ctx, job)
	})

	eng := mapreduce.Engine{Runner: viaConf, Log: slog.New(slog.DiscardHandler)}
	spec := wordCount{Docs: filepath.Join(dir, "docs.parquet"), Out: filepath.Join(dir, "counts"), MinLength: 4}
	if _, err := eng.Run(context.Background(), spec); err != nil {
		log.Fatal(err)
	}
	printCounts(spec.Out)
	// Output:
	// brown 1
	// jumps 1
	// lazy 1
	// over 1
	// quick 1
}
