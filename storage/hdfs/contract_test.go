package hdfs_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trawl/trawl/storage"
	"github.com/trawl/trawl/storage/hdfs"
	"github.com/trawl/trawl/storage/storagetest"
)

// EnvTestHDFS names the HDFS directory the contract suite runs in.
const EnvTestHDFS = "TRAWL_TEST_HDFS"

// TestContractHDFS runs the storage.FS contract suite against a real HDFS
// cluster: TRAWL_TEST_HDFS=hdfs://namenode:8020/tmp/trawl-test. The run
// works in a new subdirectory of that directory (one more level per
// subtest) and removes it at the end. The connection is configured as
// trawl's is (HADOOP_CONF_DIR, HADOOP_USER_NAME, Kerberos variables).
func TestContractHDFS(t *testing.T) {
	uri := os.Getenv(EnvTestHDFS)
	if uri == "" {
		t.Skip("no real HDFS: set " + EnvTestHDFS + "=hdfs://namenode:8020/tmp/trawl-test (a directory the HDFS user may write in) " +
			"to run the storage contract suite against it, e.g. " + EnvTestHDFS + "=hdfs://nn:8020/tmp/trawl-test go test -race -run TestContractHDFS ./storage/hdfs")
	}
	if !strings.HasPrefix(strings.ToLower(uri), "hdfs:/") {
		t.Fatalf("%s=%q: want an hdfs:// URI", EnvTestHDFS, uri)
	}
	r := hdfs.Register(storage.NewResolver(), hdfs.Options{})
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	fsys, base, err := r.Resolve(uri)
	if err != nil {
		t.Fatal(err)
	}
	run := path.Join(base, fmt.Sprintf("trawl-contract-%s-%08x", time.Now().UTC().Format("20060102T150405"), rand.Uint32()))
	if err := fsys.MkdirAll(run); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fsys.RemoveAll(run); err != nil {
			t.Errorf("remove %s: %v", run, err)
		}
	})
	t.Logf("running in %s of %s", run, uri)

	var n atomic.Int32
	storagetest.Run(t, func(t *testing.T) (storage.FS, string) {
		name := strings.ReplaceAll(t.Name(), "/", "_")
		root := path.Join(run, fmt.Sprintf("%02d-%s", n.Add(1), name))
		if err := fsys.MkdirAll(root); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := fsys.RemoveAll(root); err != nil {
				t.Errorf("remove %s: %v", root, err)
			}
		})
		return fsys, root
	})
}
