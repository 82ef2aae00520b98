package jobs

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Defaults of the settings that bound a job attempt and the rescue of an
// attempt whose worker vanished without a trace (see Config).
const (
	DefaultJobTimeout = time.Minute
	// DefaultRescueMargin is added to the job timeout for the default
	// RescueAfter: an attempt still running that long after it began cannot
	// be a live worker's (its context ended at the timeout).
	DefaultRescueMargin = 30 * time.Second
)

// recoverBatch bounds the running jobs one Recover call looks at.
const recoverBatch = 1000

// Recover makes the jobs a dead process was working available again at
// once, instead of after RescueAfter. Every client names itself in the
// jobs it works by its instance.ID (Config.Instance); a running job whose
// worker is known to be gone (instance.ID.Gone: a killed process, seen
// from its restart on the same machine and PID namespace) is put back in
// the queue with its attempt counted, and runs again (workers are
// idempotent). A job whose worker runs elsewhere, or cannot be judged, is
// left to River's rescue after RescueAfter; so is one that used its last
// attempt or was being cancelled, which the rescue finishes as River
// does. It returns how many jobs it re-armed. Each serving process runs it
// every few seconds; several processes may run it at once (the update is
// conditional on the attempt it saw).
func (c *Client) Recover(ctx context.Context) (int, error) {
	if c.self == "" {
		return 0, nil
	}
	// Most runs find no job of another process running: a count on the
	// read pool settles that without River's listing.
	var running int64
	if err := c.db.Read().QueryRow(ctx, "SELECT COUNT(*) FROM river_job WHERE state = 'running'").Scan(&running); err != nil {
		return 0, fmt.Errorf("count running jobs: %w", err)
	}
	if running == 0 {
		return 0, nil
	}
	jobs, err := c.List(ctx, ListParams{States: []rivertype.JobState{rivertype.JobStateRunning}, Limit: recoverBatch})
	if err != nil {
		return 0, fmt.Errorf("list running jobs: %w", err)
	}
	var orphans []*rivertype.JobRow
	for _, j := range jobs {
		if len(j.AttemptedBy) == 0 || j.Attempt >= j.MaxAttempts || bytes.Contains(j.Metadata, []byte(`"cancel_attempted_at"`)) {
			continue
		}
		if c.self.Gone(instance.ID(j.AttemptedBy[len(j.AttemptedBy)-1])) {
			orphans = append(orphans, j)
		}
	}
	if len(orphans) == 0 {
		return 0, nil
	}
	n := 0
	err = c.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		n = 0
		for _, j := range orphans {
			// scheduled_at stays: it is in the past, so the job is due
			// at once, ahead of jobs queued since.
			k, err := tx.Exec(ctx, "UPDATE river_job SET state = 'available' WHERE id = $1 AND state = 'running' AND attempt = $2", j.ID, j.Attempt)
			if err != nil {
				return err
			}
			n += int(k)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("re-arm jobs of a dead process: %w", err)
	}
	for _, j := range orphans {
		c.logger.InfoContext(ctx, "re-armed a job its dead process was working", "job_id", j.ID, "kind", j.Kind, "attempt", j.Attempt,
			"worker", j.AttemptedBy[len(j.AttemptedBy)-1])
	}
	return n, nil
}
