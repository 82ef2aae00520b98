package store

import "context"

type commitHookKey struct{}

// CommitHook runs inside a write transaction just before it commits.
type CommitHook func(ctx context.Context, tx *Tx) error

// WithCommitHook returns a ctx under which every write transaction (InTx)
// runs fn last, inside the transaction: what fn writes commits together
// with the transaction's own changes, or not at all. An error from fn rolls
// the transaction back. The idempotency layer uses it to record, in the
// transaction of a request's effect, that the effect happened.
func WithCommitHook(ctx context.Context, fn CommitHook) context.Context {
	hooks, _ := ctx.Value(commitHookKey{}).([]CommitHook)
	return context.WithValue(ctx, commitHookKey{}, append(hooks[:len(hooks):len(hooks)], fn))
}

func runCommitHooks(ctx context.Context, tx *Tx) error {
	hooks, _ := ctx.Value(commitHookKey{}).([]CommitHook)
	for _, fn := range hooks {
		if err := fn(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}
