package jobs

import (
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

// Registry returns every engine job of this package by name, for the
// Hadoop Streaming task entry (`trawl task`): each is a spec
// (mapreduce.Spec) the task decodes from the job's configuration, so a job
// run by a task is the job its driver described.
func Registry() mapreduce.Registry {
	r := mapreduce.Registry{}
	mapreduce.Register[injectJob](r)
	mapreduce.Register[generateSelect](r)
	mapreduce.Register[generateTopN](r)
	mapreduce.Register[fetchSpec](r)
	mapreduce.Register[parseJob](r)
	mapreduce.Register[updateDB](r)
	mapreduce.Register[dedupSelect](r)
	mapreduce.Register[dedupMark](r)
	mapreduce.Register[invertLinks](r)
	mapreduce.Register[updateHostDb](r)
	mapreduce.Register[rankEdges](r)
	mapreduce.Register[rankNodes](r)
	mapreduce.Register[rankIterate](r)
	mapreduce.Register[rankScore](r)
	mapreduce.Register[warcExport](r)
	mapreduce.Register[sitemapHostsJob](r)
	mapreduce.Register[sitemapJob](r)
	mapreduce.Register[mergeDB](r)
	mapreduce.Register[mergeSegs](r)
	return r
}

// RegistryWith is Registry plus the partitioned DBSCAN jobs Cluster runs
// (dbscan.Register), for a `trawl task` that may run any of them. The
// DBSCAN label job reads its side file (the local clusters' labels)
// through the task's storage.
func RegistryWith() mapreduce.Registry {
	r := Registry()
	dbscan.Register(r)
	return r
}
