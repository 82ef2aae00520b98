package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// What a process remembers of the database for a moment (a token's
// platform, the platform hosting a party, the events webhook subscriptions
// name) is forgotten by the process that changes it once the change
// commits, and by the others when they hear of it: on PostgreSQL the
// change's transaction sends a notification (Tx.NotifyAtCommit, delivered
// only if it commits) on the database's channel, and every process
// listening (DB.Listen) runs what it registered for the topic
// (DB.OnNotify). A process does not act on its own notifications: it has
// forgotten at the commit already. What it remembers still lasts a moment
// at most, so a process that does not listen (a CLI command), or whose
// listening connection is down, sees changes within that moment as before;
// a listener that starts or reconnects runs every topic's function, as it
// may have missed notifications before. On SQLite the one serving process is the
// only one that remembers, and the CLI's writes wait out the moment.

// notifyChannel is the database's notification channel (one per schema, so
// databases sharing a server by schema do not hear each other). A schema
// whose name would make it longer than PostgreSQL's 63 bytes, which
// pg_notify refuses, is named by a hash of it.
func (db *DB) notifyChannel() string {
	const prefix = "ocpihub_forget"
	switch {
	case db.schema == "":
		return prefix
	case len(prefix)+1+len(db.schema) <= 63:
		return prefix + "_" + db.schema
	}
	sum := sha256.Sum256([]byte(db.schema))
	return prefix + "_" + hex.EncodeToString(sum[:16])
}

// notifier holds the functions registered per topic and this process's
// name in its notifications.
type notifier struct {
	self   string
	mu     sync.Mutex
	topics map[string][]func()
}

// OnNotify registers fn to run when another process's transaction that
// sent topic has committed (PostgreSQL), and when the listener starts or
// reconnects. fn must be quick and must not block.
func (db *DB) OnNotify(topic string, fn func()) {
	db.notify.mu.Lock()
	defer db.notify.mu.Unlock()
	if db.notify.topics == nil {
		db.notify.topics = map[string][]func(){}
	}
	db.notify.topics[topic] = append(db.notify.topics[topic], fn)
}

// NotifyAtCommit sends topic to the other processes listening on the
// database when tx commits (PostgreSQL; nothing on SQLite). It is queued
// like a statement of ExecLater, whose error would be the transaction's,
// and is not counted as one of the caller's statements.
func (tx *Tx) NotifyAtCommit(topic string) {
	if !slices.Contains(tx.notifies, topic) {
		tx.notifies = append(tx.notifies, topic)
	}
	if tx.pgx == nil {
		return
	}
	tx.later = append(tx.later, laterStmt{query: "SELECT pg_notify($1, $2)", args: []any{tx.db.notifyChannel(), topic + " " + tx.db.notify.self}})
}

// WillNotify reports whether tx was given topic (NotifyAtCommit), on
// either engine: the transaction changes what the topic's functions forget,
// so a process's memory of it does not hold inside tx.
func (tx *Tx) WillNotify(topic string) bool { return slices.Contains(tx.notifies, topic) }

// run calls the functions registered for topic (all of them when topic is
// empty).
func (n *notifier) run(topic string) {
	n.mu.Lock()
	var fns []func()
	for t, f := range n.topics {
		if topic == "" || t == topic {
			fns = append(fns, f...)
		}
	}
	n.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// listenRetry bounds the wait before the listener connects again.
const listenRetry = 5 * time.Second

// Listen hears the other processes' notifications until ctx ends
// (PostgreSQL; on SQLite it returns at once). Its connection is its own,
// not the pool's; when it breaks, Listen connects again, waiting up to
// listenRetry between attempts. Each time it starts to listen it runs every
// registered function, as it may have missed notifications before. ready,
// when not nil, is closed once it first listens.
func (db *DB) Listen(ctx context.Context, ready chan<- struct{}) {
	if db.pool == nil {
		if ready != nil {
			close(ready)
		}
		return
	}
	wait := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := db.listenOnce(ctx, func() {
			wait = 100 * time.Millisecond
			// What was missed before: while away, or before this process
			// first listened (it may have served requests already).
			db.notify.run("")
			if ready != nil {
				close(ready)
				ready = nil
			}
		})
		if ctx.Err() != nil {
			return
		}
		db.logger.Warn("listening for other replicas' changes failed; they reach this one within a second meanwhile", "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, listenRetry)
	}
}

// listenOnce connects, listens, calls listening, and dispatches
// notifications until the connection or ctx ends.
func (db *DB) listenOnce(ctx context.Context, listening func()) error {
	conn, err := pgx.ConnectConfig(ctx, db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{db.notifyChannel()}.Sanitize()); err != nil {
		return err
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		topic, from, _ := strings.Cut(n.Payload, " ")
		if from != db.notify.self {
			db.notify.run(topic)
		}
	}
}
