package mapreduce

import (
	"context"
	"fmt"
)

// runMapHooked runs one map split between the job's MapSetup and
// MapCleanup (see Job.MapSetup): Task.State starts nil, Task.Ctx is a
// context of the split's own, cancelled when it ends, and MapCleanup's
// pairs go through emit, whose error check reports.
func (p *plan[V, O]) runMapHooked(t *Task, run func() error, emit Emit[V], check func() error) error {
	parent := t.Ctx
	ctx, cancel := context.WithCancel(parent)
	t.Ctx, t.State = ctx, nil
	defer func() {
		cancel()
		t.Ctx = parent
	}()
	if p.job.MapSetup != nil {
		if err := p.job.MapSetup(t); err != nil {
			return fmt.Errorf("map setup: %w", err)
		}
	}
	if err := run(); err != nil {
		return err
	}
	if p.job.MapCleanup != nil {
		if err := p.job.MapCleanup(t, emit); err != nil {
			return fmt.Errorf("map cleanup: %w", err)
		}
		if err := check(); err != nil {
			return fmt.Errorf("map cleanup: %w", err)
		}
	}
	return nil
}
