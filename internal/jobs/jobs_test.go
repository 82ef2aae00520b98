package jobs_test

import (
	"context"
	"errors"
	"fmt"
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

// markArgs asks markWorker to record that key was processed. The effect is
// idempotent (one row per key) while every attempt is counted, so tests can
// tell "ran twice" from "had its effect twice".
type markArgs struct {
	Key  string `json:"key"`
	Fail int    `json:"fail"` // fail this many attempts first
}

func (markArgs) Kind() string { return "test_mark" }

type markWorker struct {
	river.WorkerDefaults[markArgs]
	db *store.DB
	// crash, when set, exits the process in the middle of the job (after its
	// attempt is recorded, before the job can complete).
	crash bool
}

func (w *markWorker) Work(ctx context.Context, job *river.Job[markArgs]) error {
	err := w.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO test_attempts (key, attempt) VALUES ($1, $2)", job.Args.Key, job.Attempt)
		return err
	})
	if err != nil {
		return err
	}
	if w.crash {
		os.Exit(3)
	}
	if job.Attempt <= job.Args.Fail {
		return fmt.Errorf("planned failure %d", job.Attempt)
	}
	return w.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO test_marks (key) VALUES ($1) ON CONFLICT (key) DO NOTHING", job.Args.Key)
		return err
	})
}

type bundle struct {
	db     *store.DB
	client *jobs.Client
	events <-chan *river.Event
}

func setupTables(t *testing.T, db *store.DB) {
	t.Helper()
	err := db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS test_marks (key TEXT PRIMARY KEY)"); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "CREATE TABLE IF NOT EXISTS test_attempts (key TEXT NOT NULL, attempt INTEGER NOT NULL)")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func setup(t *testing.T, db *store.DB, start bool) *bundle {
	t.Helper()
	setupTables(t, db)
	client, err := jobs.New(db, jobs.Config{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	jobs.AddWorker(client, &markWorker{db: db})
	b := &bundle{db: db, client: client}
	if start {
		ch, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
		t.Cleanup(cancel)
		b.events = ch
		if err := client.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = client.Stop(ctx)
		})
	}
	return b
}

// waitEvent waits for the next event of a job of kind test_mark.
func (b *bundle) waitEvent(t *testing.T, kind river.EventKind) *rivertype.JobRow {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev := <-b.events:
			if ev.Kind == kind {
				return ev.Job
			}
		case <-timeout:
			t.Fatalf("no %s event within 30s", kind)
		}
	}
}

func TestInsertTxCommitsWithTheTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, true)
		ctx := context.Background()

		boom := errors.New("rolled back")
		err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := b.client.InsertTx(ctx, tx, markArgs{Key: "rolled-back"}, nil); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		err = db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := b.client.InsertTx(ctx, tx, markArgs{Key: "committed"}, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		job := b.waitEvent(t, river.EventKindJobCompleted)
		if job.Kind != "test_mark" {
			t.Fatalf("completed %s", job.Kind)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM test_marks WHERE key = $1", "committed"); n != 1 {
			t.Fatalf("committed job: %d marks", n)
		}
		all, err := b.client.List(ctx, jobs.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 {
			t.Fatalf("a rolled-back transaction enqueued a job: %d jobs in the queue", len(all))
		}
	})
}

func TestRetryUniqueScheduledAndFailedListing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db, true)
		ctx := context.Background()

		// A failing job is retried later, with backoff.
		res, err := b.client.Insert(ctx, markArgs{Key: "flaky", Fail: 1}, nil)
		if err != nil {
			t.Fatal(err)
		}
		failed := b.waitEvent(t, river.EventKindJobFailed)
		// River keeps a retry that is due within seconds "available" with a
		// future scheduled_at, and longer ones "retryable".
		if failed.ID != res.Job.ID || (failed.State != rivertype.JobStateRetryable && failed.State != rivertype.JobStateAvailable) {
			t.Fatalf("failed job %d in state %s, want %d waiting to retry", failed.ID, failed.State, res.Job.ID)
		}
		if delay := failed.ScheduledAt.Sub(*failed.AttemptedAt); delay < time.Second || delay > 3*time.Second {
			t.Fatalf("first retry scheduled %v after the attempt, want about 2s", delay)
		}
		// An operator's retry runs it now; it succeeds on attempt 2.
		if _, err := b.client.Retry(ctx, res.Job.ID); err != nil {
			t.Fatal(err)
		}
		done := b.waitEvent(t, river.EventKindJobCompleted)
		if done.ID != res.Job.ID || done.Attempt != 2 {
			t.Fatalf("completed job %d at attempt %d", done.ID, done.Attempt)
		}

		// A job that always fails with max attempts 1 is discarded and listed.
		res2, err := b.client.Insert(ctx, markArgs{Key: "doomed", Fail: 99}, &river.InsertOpts{MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		if ev := b.waitEvent(t, river.EventKindJobFailed); ev.State != rivertype.JobStateDiscarded {
			t.Fatalf("doomed job state %s, want discarded", ev.State)
		}
		list, err := b.client.Failed(ctx, 10)
		if err != nil || len(list) != 1 || list[0].ID != res2.Job.ID {
			t.Fatalf("Failed() after discard = %d jobs, %v", len(list), err)
		}
		counts, err := b.client.Counts(ctx)
		if err != nil || counts[rivertype.JobStateDiscarded] != 1 || counts[rivertype.JobStateCompleted] != 1 {
			t.Fatalf("Counts() = %v, %v; want 1 discarded, 1 completed", counts, err)
		}
		kinds, err := b.client.Kinds(ctx, rivertype.JobStateDiscarded, rivertype.JobStateCancelled)
		if err != nil || len(kinds) != 1 || kinds[0] != "test_mark" {
			t.Fatalf("Kinds(discarded, cancelled) = %v, %v", kinds, err)
		}
		if kinds, err := b.client.Kinds(ctx, rivertype.JobStateCancelled); err != nil || len(kinds) != 0 {
			t.Fatalf("Kinds(cancelled) = %v, %v", kinds, err)
		}
		// Keyset paging: newest first, each page after the last id of the
		// previous one.
		page1, err := b.client.List(ctx, jobs.ListParams{Limit: 1})
		if err != nil || len(page1) != 1 || page1[0].ID != res2.Job.ID {
			t.Fatalf("List(limit 1) = %v, %v", page1, err)
		}
		page2, err := b.client.List(ctx, jobs.ListParams{Limit: 1, After: page1[0].ID})
		if err != nil || len(page2) != 1 || page2[0].ID != res.Job.ID {
			t.Fatalf("List(after %d) = %v, %v", page1[0].ID, page2, err)
		}
		if page3, err := b.client.List(ctx, jobs.ListParams{Limit: 1, After: page2[0].ID}); err != nil || len(page3) != 0 {
			t.Fatalf("List(after the oldest) = %v, %v", page3, err)
		}

		// Unique jobs: the second insert with equal args is skipped.
		opts := &river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}, ScheduledAt: time.Now().Add(time.Hour)}
		first, err := b.client.Insert(ctx, markArgs{Key: "unique"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		second, err := b.client.Insert(ctx, markArgs{Key: "unique"}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if first.UniqueSkippedAsDuplicate || !second.UniqueSkippedAsDuplicate || second.Job.ID != first.Job.ID {
			t.Fatalf("unique insert: first skipped=%v, second skipped=%v (ids %d, %d)", first.UniqueSkippedAsDuplicate, second.UniqueSkippedAsDuplicate, first.Job.ID, second.Job.ID)
		}
		// ...and a job scheduled for later waits.
		if first.Job.State != rivertype.JobStateScheduled {
			t.Fatalf("scheduled job in state %s", first.Job.State)
		}
	})
}

// TestJobSurvivesACrash runs a worker in a child process that dies in the
// middle of a job (after claiming it, before completing it). A new process
// then rescues the orphaned job and runs it to completion; its effect happens
// once.
func TestJobSurvivesACrash(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		db, inserter, res := crashChild(t, engine, "survivor")
		job, err := inserter.Get(ctx, res.Job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if job.State != rivertype.JobStateRunning {
			t.Fatalf("after the crash the job is %s, want running (claimed by the dead worker)", job.State)
		}
		// Time passes: the dead worker's claim ages past the rescue horizon
		// and its leadership lease runs out.
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			if _, err := tx.Exec(ctx, "UPDATE river_job SET attempted_at = $1 WHERE id = $2", time.Now().Add(-time.Hour).UTC(), res.Job.ID); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "DELETE FROM river_leader")
			return err
		}); err != nil {
			t.Fatal(err)
		}

		_, events := startWorker(t, db, jobs.Config{PollInterval: 20 * time.Millisecond, JobTimeout: time.Minute, RescueAfter: 5 * time.Minute})
		waitCompleted(t, events, res.Job.ID, 60*time.Second, "the orphaned job was not rescued and completed")
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM test_attempts WHERE key = $1", "survivor"); n != 2 {
			t.Fatalf("attempts = %d, want 2 (one crashed, one completed)", n)
		}
		if n := storetest.Count(t, db, "SELECT COUNT(*) FROM test_marks WHERE key = $1", "survivor"); n != 1 {
			t.Fatalf("effects = %d, want exactly 1", n)
		}
	})
}

// crashChild inserts a job with key on a fresh database of engine and runs
// its worker in a child process (TestCrashChild) that dies in the middle of
// it, after claiming it and before completing it; env is added to the
// child's environment.
func crashChild(t *testing.T, engine store.Engine, key string, env ...string) (*store.DB, *jobs.Client, *rivertype.JobInsertResult) {
	t.Helper()
	url := storetest.URL(t, engine)
	db := storetest.OpenURL(t, url)
	setupTables(t, db)
	inserter, err := jobs.New(db, jobs.Config{InsertOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	jobs.AddWorker(inserter, &markWorker{db: db})
	res, err := inserter.Insert(context.Background(), markArgs{Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$")
	cmd.Env = append(append(os.Environ(), "OCPIHUB_CRASH_CHILD_DB="+url), env...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 3 {
		t.Fatalf("child should crash with exit code 3, got %v\n%s", err, out)
	}
	return db, inserter, res
}

// startWorker starts a worker client with cfg (stopped when the test
// ends) and subscribes to its completed jobs.
func startWorker(t *testing.T, db *store.DB, cfg jobs.Config) (*jobs.Client, <-chan *river.Event) {
	t.Helper()
	ctx := context.Background()
	client, err := jobs.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs.AddWorker(client, &markWorker{db: db})
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	t.Cleanup(cancel)
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Stop(ctx) })
	return client, events
}

// waitCompleted waits up to d for the completion of job id at its second
// attempt (the first died with the crashed process).
func waitCompleted(t *testing.T, events <-chan *river.Event, id int64, d time.Duration, what string) {
	t.Helper()
	select {
	case ev := <-events:
		if ev.Job.ID != id || ev.Job.Attempt != 2 {
			t.Fatalf("completed job %d at attempt %d, want %d at attempt 2", ev.Job.ID, ev.Job.Attempt, id)
		}
	case <-time.After(d):
		t.Fatalf("%s within %s", what, d)
	}
}

// TestCrashChild is the crashing worker process of TestJobSurvivesACrash; it
// does nothing when run on its own.
func TestCrashChild(t *testing.T) {
	url := os.Getenv("OCPIHUB_CRASH_CHILD_DB")
	if url == "" {
		return
	}
	ctx := context.Background()
	db, err := store.Open(ctx, url, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := jobs.Config{PollInterval: 20 * time.Millisecond}
	if os.Getenv("OCPIHUB_CRASH_CHILD_INSTANCE") != "" {
		cfg.Instance = instance.New()
	}
	client, err := jobs.New(db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs.AddWorker(client, &markWorker{db: db, crash: true})
	if err := client.Start(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Second) // the worker exits the process long before
	t.Fatal("the crashing worker never ran")
}
