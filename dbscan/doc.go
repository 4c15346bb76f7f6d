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
// then checks those leaves' boxes (tested a candidate against groups of
// the leaf's nearby points at once, without branches) and scans the leaves
// that are neither too far nor wholly within Eps. Pass 1 counts
// neighbours as the descent reaches each leaf and stops at MinPts;
// non-core points keep their (fewer than MinPts) neighbours, core points
// the MinPts that made them core. Pass 2
// links core points within Eps of each other in a concurrent union-find:
// first along those kept neighbours, which joins most of every cluster
// without a distance; then over each pair of leaves once, skipping pairs of
// points, and of leaves, already in one set, and linking whole nodes at
// once where a node's diameter or its distance to a core point is at most
// Eps. Both passes run on Params.Workers goroutines. Memory is O(n) plus at
// most MinPts neighbours per point; no whole neighbourhood of a core point
// is stored, unlike scikit-learn, which materializes them all.
//
// Measured on simweb-like features (genWebFeatures in the tests: 6
// dimensions after log1p, standardized; MinPts 12) against scikit-learn
// 1.2.1's DBSCAN (ball tree, Debian's python3-sklearn) on the same points,
// on 2 cores shared with other work (so CPU seconds are the fair measure;
// the labels were identical to scikit-learn's in every run):
//
//	points     eps    neighbours  this package       scikit-learn
//	100,000    0.25   19 / point  0.95 s CPU         3.8 s CPU, 151 MiB
//	100,000    0.5    96 / point  1.5 s CPU          8.3 s CPU, 215 MiB
//	1,000,000  0.1                13 s CPU, 424 MiB  94 s CPU, 542 MiB
//	1,000,000  0.355              25 s CPU           (not run: it stores
//	                                                 every neighbourhood)
//
// (eps 0.355 is SuggestEps' knee for that data: 93% of the points are
// core.) Partitioned DBSCAN on the local engine, 1,000,000 points in 8
// boxes at eps 0.1, took 35 s (29 s CPU): Parquet, the shuffles and 46%
// more points as halo copies cost about twice the clustering itself.
//
// # Partitioned DBSCAN
//
// Run clusters points that need not fit in memory as jobs on trawl's
// MapReduce engine. The stats job computes the moments (for
// standardization) and a sample; the driver cuts space into boxes on the
// sample (PlanPartitions). The local job sends each point to the box that
// owns it and, as a halo point, to every other box within Eps of it
// (Partitioning.Halo), and clusters each box in one reduce call: an owned
// point's neighbours are all owned or halo points of its box, so its core
// status is exact, and so are the box's local clusters (owned core points
// linked within Eps) and which halo points and border points are within
// Eps of which local clusters. The join job meets each halo point's own
// box's result with the links other boxes found for it: a core halo point
// joins its local cluster to theirs (edges), a non-core one is a border
// candidate of theirs. The driver merges the local clusters along the
// edges (union-find) and numbers the clusters by their first core point's
// key; the label job gives a core point its cluster and a border point the
// lowest-numbered cluster among its candidates, Cluster's rule. So Run's
// labels equal Cluster's on the same points ordered by key, label for
// label, for any boxes (TestRunEqualsExact, TestRunMemoryBudget; and
// bench/dbscan's partitioned mode against trawl dbscan at 1,000,000 and
// 10,000,000 points).
//
// # Memory
//
// The engine's memory budget (JobConfig.MemoryBudget, trawl's
// engine.memory) is shared by the tasks it runs at once; a map task that
// fills its share spills a sorted run to the engine's temporary
// directory, and every job's input and output is Parquet on disk, so only
// a box's clustering must fit in memory: a reduce task clusters one box
// at a time, holding the box's own and halo points and what clusterLocal
// keeps for them, measured at about 640 bytes per point (6-d, minPts 12).
// With JobConfig.Partitions 0, Run chooses the boxes from the budget: at
// least the engine's parallelism, and more until the largest box,
// estimated from the sample (its own and halo sample points, scaled to all
// the points, plus three standard deviations), fits in a task's share,
// budget / parallelism. Smaller boxes mean more halo copies (each box
// also clusters the points within Eps around it), so a small budget costs
// time, not correctness. Two things are not bounded by the boxes: the
// centres job holds one cluster's members in memory (about 150 bytes per
// member), and the driver holds the local clusters and the edges between
// them (a few per box).
//
// Measured (bench/README.md, "bench/dbscan"; 2 loaded cores, eps 0.1,
// minPts 12, simweb features): 10,000,000 points at the default 256 MiB
// budget took 256 boxes, 2.3 halo copies per point, 590 s CPU and 433 MiB
// peak RSS, with labels identical to Cluster's, which took 320 s CPU and
// 5.4 GiB; 1,000,000 points took 12 boxes, 30 s CPU and 243 MiB.
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
