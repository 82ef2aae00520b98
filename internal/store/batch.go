package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"

	"github.com/ocpihub/ocpihub/internal/tracing"
)

// maxBatch bounds the members of one shared transaction: a longer batch
// holds its row locks (and SQLite's writer) longer for the last member.
const maxBatch = 64

// batcher runs group commit (InBatch): concurrent writes share one
// transaction. A write joins the queue; when no batch is running it leads
// one itself, otherwise the batch that is running hands the lead, once it
// has committed, to the first write that queued meanwhile, which takes
// every queued write into the next transaction. So while one transaction
// commits the next one fills, one batch runs at a time (on SQLite the
// writer is single anyway; on PostgreSQL two batches could lock rows in
// opposite orders), and a write waits at most for the batch ahead of it.
//
// Background writes (Background) have a batcher of their own, whose
// transactions pass the writer gate as background work: delivery's claims
// and settlements from many receivers share one transaction and one commit,
// and still take only the background share of a saturated writer.
type batcher struct {
	background bool

	mu      sync.Mutex
	running bool
	queue   []*member
}

// member is one write of a batch.
type member struct {
	ctx context.Context
	fn  func(ctx context.Context, tx *Tx) error
	// taken is set (under batcher.mu) once a batch took the member: from
	// then on it waits for its outcome, even when its ctx ends.
	taken bool
	// lead is closed to make the member run the next batch; done once its
	// outcome is known.
	lead, done chan struct{}
	err        error
	panicked   bool
	panicVal   any
	// afterCommit holds the member's AfterCommit functions.
	afterCommit []func()
}

// InBatch runs fn as a member of a shared write transaction and returns
// once that transaction has committed (nil) or fn's change was undone (an
// error): group commit. It has InTx's contract — fn's changes commit
// together, or none of them; an error or a panic of fn undoes them and is
// the caller's — and writes of concurrent callers share the transaction
// and its commit, which is what makes it cheaper than InTx under load.
//
// Each member runs in a savepoint (when it shares the transaction), so a
// failing member does not fail the others; they run one after another, in
// arrival order, each seeing the changes of the members before it. A
// member's commit hooks (WithCommitHook) run in its savepoint after fn,
// and its AfterCommit functions after the commit, only when it committed.
// If the commit itself fails, every member of the batch gets the error:
// nothing is answered as done that was not committed.
//
// fn runs on the goroutine of the batch's leader, with a ctx that carries
// the values of the caller's ctx but not its cancellation: cancelling one
// member's statement would abort the shared transaction (SQLite rolls a
// whole transaction back when a statement is interrupted; pgx closes the
// connection). A ctx that ends while the write still waits to join
// returns ctx.Err() and changes nothing; once its batch took it, the write
// waits for its outcome.
//
// Inside a held transaction (a nested call from an InTx or InBatch
// function) fn runs in that transaction: the caller's transaction is the
// batch. A nested InTx is refused (ErrTxHeld).
func (db *DB) InBatch(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) (err error) {
	if tx := HeldTx(ctx); tx != nil {
		return fn(ctx, tx)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	ctx, span := tracing.Start(ctx, "transaction", tracing.Client)
	defer span.EndErr(&err)
	span.SetDBSystem(string(db.engine))
	m := &member{ctx: ctx, fn: fn, lead: make(chan struct{}), done: make(chan struct{})}
	b := &db.batch
	if IsBackground(ctx) {
		b = &db.bgBatch
	}
	b.mu.Lock()
	b.queue = append(b.queue, m)
	if !b.running {
		b.running = true
		m.taken = true
		close(m.lead)
	}
	b.mu.Unlock()
	select {
	case <-m.lead:
		db.leadBatch(ctx, b)
	case <-m.done:
	case <-ctx.Done():
		b.mu.Lock()
		if !m.taken {
			b.queue = removeMember(b.queue, m)
			b.mu.Unlock()
			return fmt.Errorf("begin: %w", ctx.Err())
		}
		b.mu.Unlock()
		// Taken: the batch runs it; its outcome is the answer. The lead
		// may still come (when the member was taken as the next leader).
		select {
		case <-m.lead:
			db.leadBatch(ctx, b)
		case <-m.done:
		}
	}
	<-m.done
	if m.panicked {
		panic(m.panicVal)
	}
	return m.err
}

// leadBatch takes the queued members (its own first), runs them in one
// transaction, and hands the lead on to the first member queued meanwhile.
func (db *DB) leadBatch(ctx context.Context, b *batcher) {
	members := b.take(nil)
	members = db.runBatch(context.WithoutCancel(ctx), b, members)

	b.mu.Lock()
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.taken = true
		close(next.lead)
	} else {
		b.running = false
	}
	b.mu.Unlock()
	for _, m := range members {
		close(m.done)
	}
}

// take moves queued members into members, up to maxBatch in all.
func (b *batcher) take(members []*member) []*member {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := min(len(b.queue), maxBatch-len(members))
	if n <= 0 {
		return members
	}
	for _, m := range b.queue[:n] {
		m.taken = true
		members = append(members, m)
	}
	b.queue = append(b.queue[:0:0], b.queue[n:]...)
	return members
}

// runBatch runs members in one transaction and sets each one's outcome. It
// returns the members it ran: those it was given and those that queued
// while the batch waited for the writer gate, which join it.
func (db *DB) runBatch(ctx context.Context, b *batcher, members []*member) []*member {
	alone := func(m *member) {
		m.err, m.afterCommit = nil, nil
		one := []*member{m}
		db.runShared(ctx, b.background, &one, nil)
	}
	if db.runShared(ctx, b.background, &members, b) {
		for _, m := range members {
			if m.err == nil && !m.panicked {
				alone(m)
			}
		}
	}
	// A member chosen as the victim of a deadlock (PostgreSQL: the batch's
	// members lock rows in arrival order, another transaction may lock the
	// same rows in another order) was rolled back to its savepoint and its
	// locks let go; the other transaction went on. Run alone, now, it no
	// longer closes a cycle: it waits its turn instead of failing a request.
	for attempt := 1; attempt <= lockConflictRetries; attempt++ {
		again := false
		for _, m := range members {
			if m.err != nil && !m.panicked && IsLockConflict(m.err) {
				alone(m)
				again = true
			}
		}
		if !again {
			break
		}
	}
	return members
}

// lockConflictRetries bounds how often a batch member that lost a deadlock
// or a serialization conflict, or gave up waiting for a lock, runs again
// alone.
const lockConflictRetries = 3

// batchLockTimeout is how long a member of a shared PostgreSQL batch waits
// for a row lock before it gives up its place (it runs again alone, where
// it waits as long as it takes). A batch commits within milliseconds, so a
// wait longer than this is for another batch or a long transaction.
const batchLockTimeout = "50ms"

// IsLockConflict reports a PostgreSQL deadlock (40P01), serialization
// failure (40001) or lock wait given up (55P03, the batch's lock timeout):
// the transaction lost to a concurrent one and may run again.
func IsLockConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001" || pgErr.Code == "55P03")
}

// runShared runs *ms in one transaction and sets each one's outcome, or
// reports that the commit was refused and the members that succeeded must
// run again (their outcome is not set then). With from set, the members
// that queued there while the transaction waited for its turn at the
// writer gate join it (*ms grows): a batch that waited behind other work
// leaves fewer to wait after it.
func (db *DB) runShared(ctx context.Context, background bool, ms *[]*member, from *batcher) (retry bool) {
	members := *ms
	fail := func(err error) {
		for _, m := range members {
			if m.err == nil && !m.panicked {
				m.err = err
			}
		}
	}
	release, err := db.gate.acquire(ctx, background)
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
		return false
	}
	defer func() { release() }()
	if from != nil {
		members = from.take(members)
		*ms = members
	}
	tx := &Tx{db: db, engine: db.engine}
	if db.pool != nil {
		err = db.beginPostgres(ctx, tx)
	} else {
		tx.sql, err = db.write.BeginTx(ctx, nil)
	}
	if err != nil {
		fail(fmt.Errorf("begin: %w", err))
		return
	}
	committed := false
	defer func() {
		tx.ended.Store(true)
		if tx.pgx != nil {
			tx.endPostgres(ctx, committed)
		} else if !committed {
			_ = tx.sql.Rollback()
		}
	}()
	// owed holds the savepoint statements a member's end calls for (release
	// it, or roll back to it and release it). They are sent with the next
	// member's SAVEPOINT, in one round trip on PostgreSQL; a release owed at
	// the commit is not sent at all (the commit releases every savepoint).
	var owed []string
	// A lone member needs no savepoint: its failure rolls the whole
	// transaction back, which is its alone.
	shared := len(members) > 1
	if shared && tx.pgx != nil {
		// A member that waits for a row lock gives up after a moment: it is
		// rolled back to its savepoint and runs again alone once the batch
		// has committed (IsLockConflict), rather than holding the batch and
		// every lock its members took. Two batches that lock the same
		// locations in opposite orders (status PATCHes in arrival order, a
		// settlement's resyncs in its own) otherwise stall until the
		// server's deadlock detection, a second later, fails one of them.
		owed = append(owed, "SET LOCAL lock_timeout = '"+batchLockTimeout+"'")
	}
	ok := 0
	for _, m := range members {
		if err := m.ctx.Err(); err != nil {
			// Given up while queued (taken before it could leave): it
			// changes nothing.
			m.err = fmt.Errorf("begin: %w", err)
			continue
		}
		if shared {
			if err := tx.savepoint(ctx, append(owed, "SAVEPOINT batch_member")...); err != nil {
				fail(fmt.Errorf("savepoint: %w", err))
				return
			}
			owed = owed[:0]
		}
		db.runMember(tx, m, shared)
		if m.err == nil && !m.panicked {
			ok++
			if shared {
				owed = append(owed, "RELEASE SAVEPOINT batch_member")
			}
			continue
		}
		if !shared {
			return // rolled back by the deferred function
		}
		owed = append(owed, "ROLLBACK TO SAVEPOINT batch_member", "RELEASE SAVEPOINT batch_member")
	}
	if ok == 0 {
		return
	}
	if len(owed) > 1 {
		// The last member failed: its changes are undone before the commit.
		if err := tx.savepoint(ctx, owed...); err != nil {
			// The transaction cannot be trusted any more: nobody commits.
			fail(fmt.Errorf("rollback to savepoint: %w", err))
			return
		}
	}
	if tx.pgx != nil {
		err = tx.commitPostgres(ctx)
	} else if err = tx.sql.Commit(); err != nil {
		err = fmt.Errorf("commit: %w", err)
	}
	if err != nil {
		if ok > 1 && definiteFailure(err) {
			// The server refused the commit (a deferred constraint one
			// member broke, a serialization failure): nothing committed,
			// so each member that succeeded runs again alone and gets its
			// own outcome. A commit whose outcome is unknown (the
			// connection broke) is not run again: it may have committed.
			retry = true
			return
		}
		fail(err)
		return
	}
	committed = true
	tx.ended.Store(true)
	release()
	release = func() {}
	for _, m := range members {
		if m.err == nil && !m.panicked {
			for _, fn := range m.afterCommit {
				fn()
			}
		}
	}
	return false
}

// runMember runs one member's function and commit hooks in tx, catching
// a panic as the member's outcome. A member alone in its transaction
// leaves what it queued to the COMMIT (one round trip on PostgreSQL):
// an error there is the transaction's, which is its alone.
func (db *DB) runMember(tx *Tx, m *member, shared bool) {
	mark := len(tx.afterCommit)
	defer func() {
		if v := recover(); v != nil {
			m.panicked, m.panicVal = true, v
		}
		if m.err == nil && !m.panicked {
			m.afterCommit = append(m.afterCommit, tx.afterCommit[mark:]...)
		} else {
			// Rolled back to its savepoint: what it queued is not sent.
			tx.dropLater()
		}
		tx.afterCommit = tx.afterCommit[:mark]
	}()
	mctx := withTx(context.WithoutCancel(m.ctx), tx)
	tx.laterErr = nil // the members before it committed or were rolled back to their savepoints
	defer func() {
		// A queued statement of its own that failed is its outcome, even
		// if what sent it ignored the error (Tx.laterErr).
		if tx.laterErr != nil && !m.panicked {
			m.err = tx.laterErr
		}
	}()
	if m.err = m.fn(mctx, tx); m.err != nil {
		return
	}
	if m.err = runCommitHooks(mctx, tx); m.err != nil {
		return
	}
	// A member that shares the transaction sends its queued statements
	// (ExecLater) before it counts as done, so an error they cause is its
	// own.
	if shared {
		m.err = tx.flushLater(mctx)
	}
}

// savepoint runs savepoint statements in order (not counted as the
// caller's): on PostgreSQL in one round trip (a simple query of several
// statements).
func (tx *Tx) savepoint(ctx context.Context, stmts ...string) error {
	if err := tx.flushLater(ctx); err != nil {
		return err
	}
	if tx.pgx != nil {
		if tx.beginOwed {
			// The first savepoint of a batch: its BEGIN goes with it.
			stmts = append([]string{"begin"}, stmts...)
			tx.beginOwed = false
		}
		_, err := tx.pgx.Exec(ctx, strings.Join(stmts, "; "))
		return err
	}
	for _, stmt := range stmts {
		if _, err := tx.sql.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// InBatchRetryUnique is InBatch, run once more when fn failed on a unique
// violation (see InTxRetryUnique).
func (db *DB) InBatchRetryUnique(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	err := db.InBatch(ctx, fn)
	if err != nil && IsUniqueViolation(err) {
		err = db.InBatch(ctx, fn)
	}
	return err
}

// definiteFailure reports whether a commit's error came from the database
// refusing it (so the transaction did not commit: an error, or a COMMIT
// answered with a rollback), rather than from a connection whose fate is
// unknown.
func definiteFailure(err error) bool {
	var pgErr *pgconn.PgError
	var sqErr *sqlite.Error
	return errors.As(err, &pgErr) || errors.As(err, &sqErr) || errors.Is(err, errCommitRolledBack)
}

func removeMember(ms []*member, m *member) []*member {
	for i, x := range ms {
		if x == m {
			return append(ms[:i], ms[i+1:]...)
		}
	}
	return ms
}

// InShared runs fn in a write transaction that concurrent callers share
// where sharing is cheaper. On SQLite it is InBatch: the single writer runs
// transactions one at a time anyway, and concurrent writes that share one
// pay for one BEGIN, one commit and one turn at the writer gate, and write
// the pages they touch in common (the last page of a table they all
// append to) once. On PostgreSQL it is InTx: a write of many statements
// (a CDR: its row, its event, its price, its push) in a shared batch would
// make the members after it wait for each of its round trips, while
// transactions of their own run side by side on the pool and the server
// flushes their commits together. So does a write of a few statements: an
// EVSE status PATCH (three round trips with ExecLater) ran 20–25 % faster
// in transactions of its own than in shared batches, whose members wait for
// each other's round trips one after another on one connection.
func (db *DB) InShared(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	if db.pool != nil {
		return db.InTx(ctx, fn)
	}
	return db.InBatch(ctx, fn)
}

// InSharedRetryUnique is InShared, run once more when fn failed on a unique
// violation (see InTxRetryUnique).
func (db *DB) InSharedRetryUnique(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	err := db.InShared(ctx, fn)
	if err != nil && IsUniqueViolation(err) {
		err = db.InShared(ctx, fn)
	}
	return err
}
