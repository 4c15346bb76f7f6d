package parquetio

// HasColumnarPlan reports whether r reads its rows with the columnar
// decoder.
func HasColumnarPlan[T any](r *Reader[T]) bool { return r.plan != nil }

// DropColumnarPlan makes r read its rows with parquet-go's reader.
func DropColumnarPlan[T any](r *Reader[T]) { r.plan = nil }
