package store

import (
	"context"
	"database/sql"
	"strings"
	"sync"
)

// maxCachedStmts bounds the statements kept prepared per pool: the
// module's SQL texts are a few hundred; texts built at run time beyond the
// bound (IN lists of every length) are parsed each time, as without a
// cache.
const maxCachedStmts = 2000

// stmtCache keeps SQLite statements prepared, per pool and SQL text.
// Parsing a statement costs SQLite more than running most of ours (a
// profile of the payment flow spent 40% of its time in the parser), and
// database/sql re-parses every text it is given. A statement prepared on a
// pool is prepared once on each of its connections and reused.
//
// The writer has one connection, held by the running transaction, so a
// text is never prepared on it from inside a transaction (that would
// wait for the connection the transaction holds): a text the transaction
// ran unprepared is remembered and prepared once the transaction has
// ended, and later transactions reuse it through sql.Tx.StmtContext.
// PostgreSQL needs none of this: pgx caches prepared statements per
// connection itself.
type stmtCache struct {
	mu      sync.Mutex
	write   map[string]*sql.Stmt
	read    map[string]*sql.Stmt
	pending map[string]bool // texts to prepare on the writer
}

func newStmtCache() *stmtCache {
	return &stmtCache{write: map[string]*sql.Stmt{}, read: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// cacheable reports whether a text is worth keeping prepared: one
// statement (a script runs its statements one after the other anyway).
func cacheable(query string) bool {
	q := strings.TrimSpace(query)
	return !strings.Contains(strings.TrimSuffix(q, ";"), ";")
}

// writer returns the writer's prepared statement for query, or nil: then
// the text is run as it is and prepared after the transaction
// (prepareWriter).
func (c *stmtCache) writer(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.write[query]; ok {
		return s
	}
	if len(c.write)+len(c.pending) < maxCachedStmts && cacheable(query) {
		c.pending[query] = true
	}
	return nil
}

// prepareWriter prepares the texts transactions ran unprepared. It runs
// after a transaction ended, so the writer's connection is free (River may
// hold it for a moment: then this waits, outside any transaction).
func (c *stmtCache) prepareWriter(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	if len(c.pending) == 0 {
		c.mu.Unlock()
		return
	}
	texts := make([]string, 0, len(c.pending))
	for q := range c.pending {
		texts = append(texts, q)
	}
	clear(c.pending)
	c.mu.Unlock()
	for _, q := range texts {
		s, err := db.PrepareContext(context.WithoutCancel(ctx), q)
		if err != nil {
			continue // the text fails when run, where its error is reported
		}
		c.mu.Lock()
		if _, ok := c.write[q]; ok {
			s.Close()
		} else {
			c.write[q] = s
		}
		c.mu.Unlock()
	}
}

// reader returns the reader pool's prepared statement for query (nil: run
// the text as it is).
func (c *stmtCache) reader(ctx context.Context, db *sql.DB, query string) *sql.Stmt {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	s, ok := c.read[query]
	full := len(c.read) >= maxCachedStmts
	c.mu.Unlock()
	if ok {
		return s
	}
	if full || !cacheable(query) {
		return nil
	}
	s, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.read[query]; ok {
		s.Close()
		return prev
	}
	c.read[query] = s
	return s
}
