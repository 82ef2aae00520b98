package jobs_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
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
	for _, engine := range storetest.Engines() {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			url := storetest.URL(t, engine)
			ctx := context.Background()
			db, err := store.Open(ctx, url, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := jobs.Migrate(ctx, db, nil); err != nil {
				t.Fatal(err)
			}
			setupTables(t, db)
			inserter, err := jobs.New(db, jobs.Config{InsertOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			jobs.AddWorker(inserter, &markWorker{db: db})
			res, err := inserter.Insert(ctx, markArgs{Key: "orphan"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
			cmd.Env = append(os.Environ(), "OCPIHUB_CRASH_CHILD_DB="+url, "OCPIHUB_CRASH_CHILD_INSTANCE=1")
			out, err := cmd.CombinedOutput()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
				t.Fatalf("child should crash with exit code 3, got %v\n%s", err, out)
			}
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

			client, err := jobs.New(db, jobs.Config{PollInterval: 20 * time.Millisecond, Instance: instance.New(), JobTimeout: time.Minute, RescueAfter: 5 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			jobs.AddWorker(client, &markWorker{db: db})
			events, cancel := client.Subscribe(river.EventKindJobCompleted)
			defer cancel()
			if err := client.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer client.Stop(ctx)
			n, err := client.Recover(ctx)
			if err != nil || n != 1 {
				t.Fatalf("Recover re-armed %d jobs (%v), want 1", n, err)
			}
			select {
			case ev := <-events:
				if ev.Job.ID != res.Job.ID || ev.Job.Attempt != 2 {
					t.Fatalf("completed job %d at attempt %d, want %d at attempt 2", ev.Job.ID, ev.Job.Attempt, res.Job.ID)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the re-armed job did not complete within 30s")
			}
			if n := count(t, db, "SELECT COUNT(*) FROM test_marks WHERE key = $1", "orphan"); n != 1 {
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
}
