// Package dbscan is exact DBSCAN (Ester, Kriegel, Sander and Xu, 1996) for
// low-dimensional points, the feature standardization that precedes it,
// and the partitioned DBSCAN that runs it as MapReduce jobs on trawl's
// engine with exactly the single-machine result.
//
// # DBSCAN
//
// Cluster takes points (Points, row-major float64) and Params: Eps and
// MinPts. The neighbourhood of p is every point q with
// ||p - q|| <= Eps, p itself included; p is a core point when its
// neighbourhood holds at least MinPts points (the paper's and
// scikit-learn's convention: MinPts counts the point itself). Clusters are
// the connected components of the graph on core points with an edge
// between core points within Eps; a non-core point within Eps of a core
// point is a border point; any other point is noise (label -1).
//
// The labels are deterministic and defined by point index alone:
//
//   - clusters are numbered 0, 1, ... in the order of their lowest-index
//     core point;
//   - a border point within Eps of core points of several clusters joins
//     the cluster with the lowest number, which is the cluster whose first
//     core point comes first.
//
// Core points and noise are the same under any rule; only border points
// reachable from two clusters need one. scikit-learn's DBSCAN expands
// clusters from core points in index order and a border point keeps the
// first cluster that reaches it, which is the rule above: for the same
// points in the same order, Cluster's labels equal scikit-learn's label for
// label (checked against 1,000,000 points, see the benchmarks), not only up
// to renaming. The rule depends only on which core points lie within Eps of
// the border point and on the clusters' first core points, not on any
// visiting order, which is what lets the partitioned algorithm reproduce
// it.
//
// # Features and standardization
//
// FeatureVector turns a page's crawldb.Features into the paper's six
// features: non-markup words, outlinks, inlinks, images, URL depth and
// bytes, taking log1p of the heavy-tailed ones (all but depth; see
// LogFeatures). A Scaler standardizes them to z-scores (x - mean) / std,
// with the population standard deviation (a constant feature is only
// centred). Moments computes mean and std in one streaming pass
// (Welford), and Moments.Merge combines the moments of disjoint parts, so
// the partitioned job computes them with a combiner in its map tasks and
// a merge in one reduce; FitScaler is the plain function over Points.
//
// # Index and cost
//
// Points go into a k-d tree (median splits of the widest dimension of each
// node's tight bounding box, leaves of up to 16 points). It was measured
// against grids of Eps-sized cells hashed by non-empty cell over the first
// k dimensions, neighbours taken from the 3^k surrounding cells and then
// checked exactly (BenchmarkNeighbourCount: counting all neighbours of
// 100,000 6-d simweb-like points). No k wins at every Eps: at Eps 0.25
// (19 neighbours per point) the best grid (k = 4) took 0.71 s and the tree
// 0.95 s, but at Eps 0.5 (96 neighbours) the same grid took 4.0 s, the
// best one (k = 5) 2.2 s and the tree 1.6 s; with all 6 dimensions a cell
// has 729 neighbouring cells and the grid took 2.5 s and 4.0 s. The tree
// prunes in every dimension at the density the data has wherever it is,
// stops counting at MinPts and counts or links whole nodes, so it is the
// index here.
//
// Neighbourhoods are found a leaf at a time: a dual-tree descent finds,
// for every leaf, the nodes wholly within Eps of all its points (counted
// or linked as a whole) and the leaves that may hold neighbours; each point
// then checks those leaves' boxes and scans the leaves that are neither too
// far nor wholly within Eps. Pass 1 counts neighbours, nearest leaves
// first, and stops at MinPts; non-core points keep their (fewer than
// MinPts) neighbours. Pass 2 links core points within Eps of each other in
// a concurrent union-find, visiting each pair of leaves once, skipping
// pairs already in one set, and linking whole nodes at once where a node's
// diameter or its distance to a core point is at most Eps. Both passes run
// on Params.Workers goroutines. Memory is O(n) plus the non-core points'
// neighbour lists (fewer than MinPts each); no neighbourhood of a core
// point is ever stored, unlike scikit-learn, which materializes them all.
//
// Measured on 2 shared cores with simweb-like features (6 dimensions,
// standardized, MinPts 12; BenchmarkCluster1M and TestDumpWebData): see
// the package's benchmarks for the current numbers.
//
// # Partitioned DBSCAN on the engine
//
// Run reads points (PointRow rows keyed by a unique string, or a CrawlDB's
// young pages keyed by URL) and runs these jobs (Registry has them for the
// Hadoop task entry):
//
//  1. dbscan-stats: moments of every dimension (Moments, merged by a
//     combiner and one reduce) and a sample that merges (the points of
//     smallest FNV-64a hash of the key).
//  2. The driver standardizes the sample (if asked) and cuts space into
//     boxes at quantiles of the sample (PlanPartitions).
//  3. dbscan-local: the map sends each point to the box that owns it and,
//     as a halo point, to every other box whose distance from the point
//     is at most Eps; each box is a reduce key. A box runs DBSCAN on its
//     set: the core status of its own points, counting its halo points as
//     neighbours; local clusters of its own core points; each local
//     cluster's first key; for each halo point, the local clusters it is
//     within Eps of a core point of ("links"); for each non-core own
//     point, the local clusters of its core neighbours.
//  4. dbscan-join, by key: a point that is a halo point somewhere meets
//     its own box's result. If it is core, each link is an edge between
//     its local cluster and the linked one; if not, each link makes it a
//     border candidate of the linked cluster.
//  5. The driver merges the local clusters along the edges (union-find;
//     there are few) and numbers the clusters by their first core key.
//  6. dbscan-label, by key: a core point takes its local cluster's number;
//     a non-core point the lowest number among its candidates, local and
//     from the join; else it is noise.
//  7. dbscan-centres, by cluster: each cluster's centre and samples.
//
// Run writes its result into JobConfig.Output with one rename at the end:
// assignment/ (an Assignment per point: key, label, core), centres/
// (Centre), samples/ (Sample) and params/ (one Parameters row: the
// parameters, the standardization, the counts).
//
// The result equals Cluster's on the same (standardized) points taken in
// key order, for any number and shape of boxes:
//
//   - Ownership: a box is a leaf of a tree of cuts x[d] < v, so every
//     point has exactly one owning box.
//
//   - Halo: if p is owned by box B and q is within Eps of p, then q is in
//     B's set. The distance from q to B is summed, like sqDist, from
//     per-dimension gaps (v - q[d] or q[d] - v for the cuts bounding B),
//     and each gap is, in floating point too, at most |p[d] - q[d]|
//     because p lies in B and rounding is monotone; so it is at most
//     sqDist(p, q) <= Eps*Eps.
//
//   - Core points: an own point's whole neighbourhood is in its box's set,
//     so its count, and its core status, are exact. A halo point's status
//     is never taken from a box that does not own it.
//
//   - No false merge: a local cluster links own core points within Eps of
//     each other, and an edge joins two local clusters only through a point
//     that is core in its own box and within Eps of a core point of the
//     other: every link is an edge of the core graph, so every merged
//     cluster lies within one true cluster.
//
//   - No missed merge: let core points p (owned by B) and q (owned by B')
//     be within Eps. If B = B' they are in one local cluster. Otherwise q
//     is a halo point of B (Halo), B links q to p's local cluster, and the
//     join, seeing q core in B', makes the edge. So the merged clusters are
//     the connected components of the core graph: the true clusters.
//
//   - Numbering: a local cluster's first key is its lowest core key, a
//     true cluster's lowest core key is the lowest of its local clusters',
//     and clusters are numbered in that order, as Cluster numbers them by
//     lowest core index.
//
//   - Border points: a non-core point b owned by B sees its core
//     neighbours in B directly; a core neighbour q owned by another box B'
//     has b within Eps, so b is a halo point of B', B' links b to q's local
//     cluster, and the join, seeing b non-core, makes that cluster a
//     candidate. b's candidates are exactly the clusters of its core
//     neighbours and it takes the lowest number, which is Cluster's rule.
//     No candidate: noise.
//
// Nothing above depends on the boxes, so the number of partitions only
// changes how the work is split. TestPartitionedEqualsExact checks it in
// memory (random data, parameters and cut trees, cuts exactly on points
// included) and TestRunEqualsExact on the engine (1 to 16 partitions, 1 to
// 4 reduce tasks, with and without standardization).
//
// # Centres and samples
//
// A cluster's centre is the mean of its members, core and border points,
// in the space they were clustered in (standardized, if they were),
// summed in key order. Its samples are its SampleCount(size, K, R) =
// max(K, ceil(R*size)) members nearest the centre (all of them if fewer),
// nearest first, ties by key; these are the pages the schedule revisits to
// learn the cluster's change rate. Centres computes the same in memory for
// Cluster's result. The centres job holds one cluster's members in memory.
//
// # Choosing eps
//
// KDistances computes the sorted k-distance curve (k = minPts-1: each
// point's distance to its k-th nearest other point, from a k-d tree,
// optionally for an evenly spaced sample of the points), Knee finds where
// it bends (the point farthest below the chord, axes scaled to [0, 1]),
// and SuggestEps(points, minPts) returns the k-distance there.
//
// # Offline experiments
//
// For `trawl dbscan`: ReadPoints reads CSV (ReadCSV: a header row, numeric
// columns used as given, errors with line numbers) or Parquet (ReadParquet:
// numeric top-level columns, nulls and corrupt files are errors naming the
// file and row); WriteLabelsCSV writes the header "label" and one label per
// point in input order. To run the partitioned jobs on such points,
// WritePointRows writes them as PointRow Parquet keyed by PointKey(i)
// (zero-padded, so key order is input order), and LabelsOf turns
// ReadAssignments' rows back into labels in input order.
//
// # Floating point
//
// Distances are computed as the sum over dimensions, in order, of squared
// differences, each product rounded on its own (no fused multiply-add),
// and compared with Eps*Eps, as scikit-learn's trees compare reduced
// distances. Every bound the index uses (a box's smallest and largest
// distance to a point or to another box, a box's diameter) is built from
// the same differences of the same operands, and rounding is monotone, so
// a bound is a bound of the computed distance, not only of the real one:
// the index never changes a neighbourhood, and the partitioned algorithm's
// halo (below) never misses a neighbour.
package dbscan
