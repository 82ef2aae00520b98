package store

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointEvery is how often the background checkpoint runs.
const checkpointEvery = 250 * time.Millisecond

// checkpointer copies SQLite's write-ahead log into the database file from
// a connection of its own. Left to SQLite, the write that pushes the log past
// 1 000 pages runs the checkpoint inside its commit: it copies the pages and
// syncs the file while holding the single writer, and every write queued
// behind it waits (a few milliseconds, every few seconds under load: the tail
// of a request's latency). The writer's automatic checkpoint is off
// (wal_autocheckpoint(0)); a PASSIVE checkpoint here runs beside the writer
// and the readers and never waits for them. The log is still restarted from
// its beginning by the writer once a checkpoint has copied all of it.
type checkpointer struct {
	conn *sql.DB
	quit chan struct{}
	wg   sync.WaitGroup
	// runs counts the checkpoints that copied pages.
	runs atomic.Int64
}

func (db *DB) startCheckpoints(ctx context.Context, base string) error {
	c, err := newCachingConnector(base)
	if err != nil {
		return err
	}
	conn := sql.OpenDB(c)
	conn.SetMaxOpenConns(1)
	if err := conn.PingContext(ctx); err != nil {
		conn.Close()
		return fmt.Errorf("open the checkpoint connection: %w", err)
	}
	ck := &checkpointer{conn: conn, quit: make(chan struct{})}
	db.ckpt = ck
	ck.wg.Go(func() {
		t := time.NewTicker(checkpointEvery)
		defer t.Stop()
		for {
			select {
			case <-ck.quit:
				return
			case <-t.C:
				ck.run(db.logger)
			}
		}
	})
	return nil
}

// run makes one PASSIVE checkpoint: it copies what no reader still needs and
// leaves the rest for the next one.
func (ck *checkpointer) run(logger *slog.Logger) {
	var busy, logPages, copied int64
	err := ck.conn.QueryRow("PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &logPages, &copied)
	if err != nil {
		logger.Warn("SQLite checkpoint failed", "error", err)
		return
	}
	if copied > 0 {
		ck.runs.Add(1)
	}
}

func (ck *checkpointer) stop() {
	close(ck.quit)
	ck.wg.Wait()
	ck.conn.Close()
}
