package mapreduce

// JobInfo describes a job as a submitter to another engine needs it.
type JobInfo struct {
	// Name is the job's name.
	Name string
	// Conf is the job's configuration (not a copy).
	Conf map[string]string
	// MapOnly says the job has no shuffle and no reduce.
	MapOnly bool
	// Reduces is the number of reduce partitions (0 for a map-only job):
	// the PPPPP field of the streaming lines ranges over [0, Reduces).
	Reduces int
	// Inputs are the URIs of the job's inputs, in order.
	Inputs []string
	// Outputs are the URIs of the job's outputs, in order.
	Outputs []string
}

// Describe validates job and describes it.
func Describe(job Runnable) (JobInfo, error) {
	ej, err := job.compile()
	if err != nil {
		return JobInfo{}, err
	}
	info := JobInfo{Name: ej.jobName(), Conf: ej.jobConf(), MapOnly: ej.isMapOnly(), Reduces: ej.reduces()}
	if ip, ok := ej.(interface{ inputPaths() []string }); ok {
		info.Inputs = ip.inputPaths()
	}
	for _, o := range ej.outSpecs() {
		info.Outputs = append(info.Outputs, o.uri)
	}
	return info, nil
}

// inputPaths are the URIs of the plan's inputs.
func (p *plan[V, O]) inputPaths() []string {
	out := make([]string, len(p.inputs))
	for i, in := range p.inputs {
		out[i] = in.path
	}
	return out
}
