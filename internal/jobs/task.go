package jobs

import (
	"context"

	"github.com/riverqueue/river"
)

// Func returns the worker of T whose work is one call of work with the
// job's args, River's defaults for the rest (a job whose work another
// package does, such as the UPI webhook intake).
func Func[T river.JobArgs](work func(ctx context.Context, args T) error) river.Worker[T] {
	return &funcWorker[T]{work: work}
}

// Task returns the worker of T, a job without parameters (a periodic
// sweep, prune or check) whose work is one call of run.
func Task[T river.JobArgs](run func(context.Context) error) river.Worker[T] {
	return Func(func(ctx context.Context, _ T) error { return run(ctx) })
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

type funcWorker[T river.JobArgs] struct {
	river.WorkerDefaults[T]
	work func(ctx context.Context, args T) error
}

func (w *funcWorker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	return w.work(ctx, job.Args)
}
