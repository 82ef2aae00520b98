package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestRecoverReArmsTheJobsOfADeadProcess: a worker process that names
// itself (Config.Instance) dies in the middle of a job. The next process
// on the same machine sees it gone and re-arms the job at once, with the
// rescue horizon still minutes away; the job completes with one effect. A
// running job of a holder it cannot judge (another machine) is left for
// the rescue.
func TestRecoverReArmsTheJobsOfADeadProcess(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		db, inserter, res := crashChild(t, engine, "orphan", "OCPIHUB_CRASH_CHILD_INSTANCE=1")
		// A job another machine is working: claimed, never finished here.
		other, err := inserter.Insert(ctx, markArgs{Key: "elsewhere"}, &river.InsertOpts{Queue: "elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		elsewhere := `["otherboot.4026531836.42.abcdefghij"]`
		attemptedBy := "CAST($1 AS TEXT[])"
		if engine == store.SQLite {
			attemptedBy = "jsonb($1)"
		}
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if engine == store.Postgres {
				elsewhere = `{otherboot.4026531836.42.abcdefghij}`
			}
			_, err := tx.Exec(ctx, "UPDATE river_job SET state = 'running', attempt = 1, attempted_by = "+attemptedBy+" WHERE id = $2", elsewhere, other.Job.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}

		client, events := startWorker(t, db, jobs.Config{PollInterval: 20 * time.Millisecond, Instance: instance.New(), JobTimeout: time.Minute, RescueAfter: 5 * time.Minute})
		n, err := client.Recover(ctx)
		if err != nil || n != 1 {
			t.Fatalf("Recover re-armed %d jobs (%v), want 1", n, err)
		}
		waitCompleted(t, events, res.Job.ID, 30*time.Second, "the re-armed job did not complete")
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM test_marks WHERE key = $1", "orphan"); n != 1 {
			t.Fatalf("effects = %d, want exactly 1", n)
		}
		if n, err := client.Recover(ctx); err != nil || n != 0 {
			t.Fatalf("a second Recover re-armed %d jobs (%v), want 0", n, err)
		}
		job, err := client.Get(ctx, other.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if job.State != rivertype.JobStateRunning || len(job.AttemptedBy) != 1 {
			t.Fatalf("another machine's job is %s attempted by %v, want running, left alone", job.State, job.AttemptedBy)
		}
	})
}
