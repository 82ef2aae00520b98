package store

import (
	"context"
	"io/fs"
)

// UpFS applies the migrations in fsys, as Migrate does with ours.
func (db *DB) UpFS(ctx context.Context, fsys fs.FS) error {
	p, closeFn, err := db.providerFor(fsys)
	if err != nil {
		return err
	}
	defer closeFn()
	_, err = p.Up(ctx)
	return err
}

// StatusFS is MigrationStatus over the migrations in fsys.
func (db *DB) StatusFS(ctx context.Context, fsys fs.FS) (current, latest int64, err error) {
	p, closeFn, err := db.providerFor(fsys)
	if err != nil {
		return 0, 0, err
	}
	defer closeFn()
	return migrationStatus(ctx, p)
}

// CachedStmts returns how many statements the writer and the readers keep
// prepared (0, 0 on PostgreSQL).
func (db *DB) CachedStmts() (write, read int) {
	if db.writeStmts == nil {
		return 0, 0
	}
	return int(db.writeStmts.cached.Load()), int(db.readStmts.cached.Load())
}

// WriterStmts returns what the SQLite writer's statement cache did (zero
// on PostgreSQL).
func (db *DB) WriterStmts() StmtStats {
	if db.writeStmts == nil {
		return StmtStats{}
	}
	return db.writeStmts.snapshot()
}

// StableLimit exposes the LIMIT rewrite of the statement cache.
var StableLimit = stableLimit

// BatchQueued returns how many writes wait to join a batch (InBatch).
func (db *DB) BatchQueued() int { return db.batch.queued() }

// BackgroundBatchQueued returns how many background writes wait to join a
// batch.
func (db *DB) BackgroundBatchQueued() int { return db.bgBatch.queued() }

func (b *batcher) queued() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, m := range b.queue {
		if !m.taken {
			n++
		}
	}
	return n
}

// WaitRefresh waits for a background recount of expired counts.
func (p *Positions) WaitRefresh() { p.refreshed.Wait() }

// AnonymousParams exposes the placeholder rewrite of the statement cache.
var AnonymousParams = anonymousParams

// BackgroundBatchRunning reports whether a background batch has a leader.
func (db *DB) BackgroundBatchRunning() bool {
	db.bgBatch.mu.Lock()
	defer db.bgBatch.mu.Unlock()
	return db.bgBatch.running
}

// GateWaiting returns how many request and background transactions wait
// at SQLite's writer gate.
func (db *DB) GateWaiting() (fg, bg int) {
	db.gate.mu.Lock()
	defer db.gate.mu.Unlock()
	return len(db.gate.fg), len(db.gate.bg)
}

// CheckpointRuns returns how many background checkpoints copied pages
// (0 on PostgreSQL).
func (db *DB) CheckpointRuns() int64 {
	if db.ckpt == nil {
		return 0
	}
	return db.ckpt.runs.Load()
}

// MigrationsFor returns our migrations as rendered for engine.
func MigrationsFor(engine Engine) (fs.FS, error) { return migrationsFor(engine) }

// NotifyChannel exposes the database's notification channel.
func (db *DB) NotifyChannel() string { return db.notifyChannel() }
