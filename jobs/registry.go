package jobs

import (
	"maps"

	"github.com/trawl/trawl/dbscan"
	"github.com/trawl/trawl/mapreduce"
)

// The engine job names, as Registry knows them.
const (
	JobInject         = "inject"
	JobGenerateSelect = "generate-select"
	JobGenerateTopN   = "generate-topn"
	JobUpdateDB       = "updatedb"
)

// Registry returns every engine job of this package by name, rebuilt from
// its Conf, for the Hadoop Streaming task entry (`trawl task`). The drivers
// (Inject, Generate, UpdateDB) build their jobs the same way, so a job run
// by a task is the job the driver described.
func Registry() mapreduce.Registry {
	return mapreduce.Registry{
		JobInject: func(c map[string]string) (mapreduce.Runnable, error) {
			return newInjectJob(c)
		},
		JobGenerateSelect: func(c map[string]string) (mapreduce.Runnable, error) {
			return newGenerateSelectJob(c)
		},
		JobGenerateTopN: func(c map[string]string) (mapreduce.Runnable, error) {
			return newGenerateTopNJob(c)
		},
		JobUpdateDB: func(c map[string]string) (mapreduce.Runnable, error) {
			return newUpdateDBJob(c)
		},
		JobFetch: func(c map[string]string) (mapreduce.Runnable, error) {
			return newFetchJob(c, nil)
		},
		JobParse: func(c map[string]string) (mapreduce.Runnable, error) {
			return newParseJob(c)
		},
	}
}

// RegistryWith is Registry plus the partitioned DBSCAN jobs Cluster runs
// (dbscan.Registry), for a `trawl task` that may run any of them. res
// resolves the side file the DBSCAN label job reads (its local cluster
// labels), as the task's storage would.
func RegistryWith(res mapreduce.Resolver) mapreduce.Registry {
	r := Registry()
	maps.Copy(r, dbscan.Registry(res))
	return r
}
