package jobs

import (
	"context"

	"github.com/riverqueue/river"
)

// Task returns the worker of T, a job without parameters (a periodic
// sweep, prune or check) whose work is one call of run.
func Task[T river.JobArgs](run func(context.Context) error) river.Worker[T] {
	return &task[T]{run: run}
}

// CountedTask is Task for a call that also returns what it did (rows
// pruned, queues restarted): the count is for the call's other callers, the
// job keeps only the error.
func CountedTask[T river.JobArgs, N any](run func(context.Context) (N, error)) river.Worker[T] {
	return Task[T](func(ctx context.Context) error {
		_, err := run(ctx)
		return err
	})
}

type task[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	run func(context.Context) error
}

func (w *task[T]) Work(ctx context.Context, _ *river.Job[T]) error { return w.run(ctx) }
