# scikit-learn's DBSCAN for bench/dbscan: run by the harness as a child
# process under Debian's /usr/bin/python3 (python3-sklearn).
#
#   skdbscan.py POINTS.csv EPS MIN_SAMPLES N_JOBS LABELS.csv CORE.txt META.json
#
# Reads the points (a header row, then one row per point), fits
# sklearn.cluster.DBSCAN(eps, min_samples, n_jobs) and writes the labels
# (header "label", one per point in input order, -1 for noise), the core
# sample indices (one per line) and the load and fit times (wall and CPU
# of this process, all threads).
import json
import sys
import time

t0, c0 = time.perf_counter(), time.process_time()

import numpy as np
import sklearn
from sklearn.cluster import DBSCAN
from sklearn.neighbors import NearestNeighbors


def main():
    pts, eps, min_samples, n_jobs, labels_out, core_out, meta_out = sys.argv[1:8]
    X = np.loadtxt(pts, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)
    t1, c1 = time.perf_counter(), time.process_time()
    db = DBSCAN(eps=float(eps), min_samples=int(min_samples), n_jobs=int(n_jobs)).fit(X)
    t2, c2 = time.perf_counter(), time.process_time()
    np.savetxt(labels_out, db.labels_, fmt="%d", header="label", comments="")
    np.savetxt(core_out, db.core_sample_indices_, fmt="%d")
    t3, c3 = time.perf_counter(), time.process_time()
    # The index algorithm="auto" chose (decided by the dimension and the
    # metric, not the size): a 100-point fit, after the timings.
    method = NearestNeighbors(radius=db.eps, algorithm=db.algorithm, leaf_size=db.leaf_size,
                              metric=db.metric, p=db.p).fit(X[:100])._fit_method
    with open(meta_out, "w") as f:
        json.dump({
            "sklearn": sklearn.__version__,
            "numpy": np.__version__,
            "points": int(X.shape[0]),
            "algorithm": db.algorithm,
            "index": method,
            "load_s": t1 - t0, "load_cpu_s": c1 - c0,
            "fit_s": t2 - t1, "fit_cpu_s": c2 - c1,
            "write_s": t3 - t2, "write_cpu_s": c3 - c2,
        }, f)


if __name__ == "__main__":
    main()
