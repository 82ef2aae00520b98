package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"

	"modernc.org/sqlite"
)

// maxCachedStmts bounds the statements one SQLite connection keeps
// prepared. The hub's and the job queue's texts are a few hundred; texts
// built at run time beyond the bound (IN lists of every length) are parsed
// each time, as without a cache.
const maxCachedStmts = 2000

// StmtStats counts what the statement cache of one SQLite pool did.
type StmtStats struct {
	// Cached is how many statements the pool's connections keep prepared.
	Cached int64
	// Parsed counts the texts SQLite parsed: first runs of cacheable texts,
	// texts run while their cached statement was busy, and the rest.
	Parsed int64
	// Reused counts the runs answered by a statement already prepared.
	Reused int64
}

type stmtCounters struct{ cached, parsed, reused atomic.Int64 }

func (c *stmtCounters) snapshot() StmtStats {
	return StmtStats{Cached: c.cached.Load(), Parsed: c.parsed.Load(), Reused: c.reused.Load()}
}

// cachingConnector opens SQLite connections that keep every statement they
// run prepared, keyed by its text.
//
// SQLite parses a text each time database/sql hands it one, and parsing
// costs more than running most of the hub's statements: in a profile of the
// initial load a third of the CPU went to the parser, most of it for the job
// queue's fetch (a long text every queue polls ten times a second on the
// single writer). Caching below database/sql covers every caller of the
// pool, the job queue included, and needs no bookkeeping above it: the
// connection is the unit SQLite prepares on, and database/sql never uses a
// connection from two goroutines at once.
type cachingConnector struct {
	inner    driver.Connector
	counters *stmtCounters
}

func newCachingConnector(dsn string) (*cachingConnector, error) {
	inner, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return &cachingConnector{inner: inner, counters: &stmtCounters{}}, nil
}

func (c *cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	for _, need := range []bool{
		implements[driver.ConnPrepareContext](conn), implements[driver.ExecerContext](conn),
		implements[driver.QueryerContext](conn), implements[driver.ConnBeginTx](conn),
	} {
		if !need {
			conn.Close()
			return nil, errors.New("sqlite driver: connection lacks a context method the statement cache needs")
		}
	}
	return &cachingConn{Conn: conn, stmts: map[string]*cachedStmt{}, counters: c.counters}, nil
}

func (c *cachingConnector) Driver() driver.Driver { return c.inner.Driver() }

func implements[T any](v any) bool {
	_, ok := v.(T)
	return ok
}

// cachingConn is one SQLite connection with its prepared statements. A
// cached statement is busy while its rows are open: the same text run
// again then (a nested query in a transaction) is parsed on its own, as
// resetting the statement would cut the open rows short.
type cachingConn struct {
	driver.Conn
	stmts    map[string]*cachedStmt
	counters *stmtCounters
}

type cachedStmt struct {
	stmt driver.Stmt
	busy bool
}

// Interfaces the connection keeps: database/sql looks for each.
var (
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.ExecerContext      = (*cachingConn)(nil)
	_ driver.QueryerContext     = (*cachingConn)(nil)
	_ driver.Pinger             = (*cachingConn)(nil)
	_ driver.SessionResetter    = (*cachingConn)(nil)
	_ driver.Validator          = (*cachingConn)(nil)
)

// cacheable reports whether a text is worth keeping prepared: one
// statement (SQLite runs a script's statements one after the other anyway).
func cacheable(query string) bool {
	q := strings.TrimSpace(query)
	return !strings.Contains(strings.TrimSuffix(q, ";"), ";")
}

// limitParam finds a LIMIT given by a bound parameter.
var limitParam = regexp.MustCompile(`(?i)\bLIMIT\s+(\?\d*|\$\d+|[:@][A-Za-z_]\w*)`)

// stableLimit wraps a LIMIT given by a bound parameter in a cast. SQLite
// reads such a parameter's value when it plans the statement, and marks
// the prepared statement stale whenever a different value is bound: every
// run with a new limit parses the text again, and the job queue's fetch
// binds a new one at nearly every poll. A cast is an expression the
// planner does not read, so the prepared plan stays; the rows are the
// same.
func stableLimit(query string) string {
	return limitParam.ReplaceAllString(query, "LIMIT CAST($1 AS INTEGER)")
}

// sqliteText is the text SQLite is given for query: placeholders made
// anonymous where that keeps their meaning (anonymousParams), then a bound
// LIMIT cast (stableLimit).
func sqliteText(query string) string { return stableLimit(anonymousParams(query)) }

// anonymousParams writes the placeholders $1, $2, … $n as "?" when they
// stand in that order, each once (outside string literals, quoted names
// and comments), and leaves any other text as it is. A "$n" is a named
// parameter to SQLite, and the driver asks for the name of every parameter
// it binds, which SQLite finds by walking a list of the statement's names:
// binding a statement's n parameters costs n² steps. A multi-row INSERT of
// 200 rows of 21 columns spent 170 µs a row on that, against 6.5 µs with
// "?" (BenchmarkRowsPerInsert). "?" parameters have no name, and the i-th
// binds the i-th argument, which is what $i named.
func anonymousParams(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	var out strings.Builder
	next, last := 1, 0
	for i := 0; i < len(query); i++ {
		switch c := query[i]; {
		case c == '\'' || c == '"' || c == '`':
			end := strings.IndexByte(query[i+1:], c)
			if end < 0 {
				return query
			}
			i += end + 1
		case c == '-' && strings.HasPrefix(query[i:], "--"):
			end := strings.IndexByte(query[i:], '\n')
			if end < 0 {
				i = len(query)
			} else {
				i += end
			}
		case c == '/' && strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return query
			}
			i += end + 3
		case c == '?' || c == ':' || c == '@':
			// Another placeholder form (or a cast): leave the text alone.
			if c == '?' || (i+1 < len(query) && isIdentByte(query[i+1])) {
				return query
			}
		case c == '$':
			if i > 0 && (isIdentByte(query[i-1]) || query[i-1] == '$') {
				return query
			}
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j == i+1 || query[i+1:j] != strconv.Itoa(next) || (j < len(query) && isIdentByte(query[j])) {
				return query
			}
			out.WriteString(query[last:i])
			out.WriteByte('?')
			last = j
			next++
			i = j - 1
		}
	}
	if next == 1 {
		return query
	}
	out.WriteString(query[last:])
	return out.String()
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// take returns the connection's prepared statement for query, marked busy,
// or nil: run the text as it is.
func (c *cachingConn) take(ctx context.Context, query string) *cachedStmt {
	if s, ok := c.stmts[query]; ok {
		if s.busy {
			return nil
		}
		s.busy = true
		c.counters.reused.Add(1)
		return s
	}
	if len(c.stmts) >= maxCachedStmts || !cacheable(query) {
		return nil
	}
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, sqliteText(query))
	if err != nil {
		return nil // the text fails again when run, which reports the error
	}
	s := &cachedStmt{stmt: st, busy: true}
	c.stmts[query] = s
	c.counters.cached.Add(1)
	c.counters.parsed.Add(1)
	return s
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s := c.take(ctx, query)
	if s == nil {
		c.counters.parsed.Add(1)
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, anonymousParams(query), args)
	}
	defer func() { s.busy = false }()
	return s.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s := c.take(ctx, query)
	if s == nil {
		c.counters.parsed.Add(1)
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, anonymousParams(query), args)
	}
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		s.busy = false
		return nil, err
	}
	return &cachedRows{Rows: rows, s: s}, nil
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, sqliteText(query))
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *cachingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *cachingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Close finalizes the cached statements, then closes the connection.
func (c *cachingConn) Close() error {
	for q, s := range c.stmts {
		s.stmt.Close()
		delete(c.stmts, q)
		c.counters.cached.Add(-1)
	}
	return c.Conn.Close()
}

// cachedRows frees their statement for the next run once closed. The
// column-type methods pass through: database/sql looks for them.
type cachedRows struct {
	driver.Rows
	s *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	if r.s != nil {
		r.s.busy = false
		r.s = nil
	}
	return err
}

func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *cachedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
