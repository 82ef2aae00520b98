package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// Reads is a set of reads that do not depend on each other's answers, sent
// together: on PostgreSQL in one pipeline, so the caller waits for the
// database once however many there are; on SQLite, where a read is a
// function call, one after another. A CDR that needs its stored copy, its
// session and its location before it is written makes one round trip for
// the three.
//
// Each read is queued with the function that scans its answer; Run sends
// them and calls the functions in the order they were queued. QueryRow's
// function gets one row: a read that finds none gives it a Row whose Scan
// returns ErrNoRows, as Querier.QueryRow does. Query's function gets its
// rows. Run returns the first error a function returned or a read failed
// with (a function that expects no row handles ErrNoRows itself); the
// functions of the reads after it still run.
//
// A Reads is used by one goroutine and run once.
type Reads struct {
	db    *DB
	reads []queuedRead
	ran   bool
}

type queuedRead struct {
	query string
	args  []any
	row   func(Row) error  // QueryRow's
	rows  func(Rows) error // Query's
}

// Reads returns an empty set of reads on db.
func (db *DB) Reads() *Reads { return &Reads{db: db} }

// QueryRow queues a read of one row; scan is called with it when the set
// runs.
func (r *Reads) QueryRow(scan func(Row) error, query string, args ...any) {
	r.reads = append(r.reads, queuedRead{query: query, args: args, row: scan})
}

// Query queues a read of rows; collect is called with them when the set
// runs (Collect reads them). They are closed after it returns.
func (r *Reads) Query(collect func(Rows) error, query string, args ...any) {
	r.reads = append(r.reads, queuedRead{query: query, args: args, rows: collect})
}

// Len returns the number of reads queued.
func (r *Reads) Len() int { return len(r.reads) }

// Run sends the queued reads and hands their answers to their functions.
// Inside a write transaction (ctx holds one) they run in it, one after
// another, as DB.ReadIn's do, and see its writes.
func (r *Reads) Run(ctx context.Context) error {
	if r.ran {
		return errors.New("store: a Reads is run once")
	}
	r.ran = true
	if len(r.reads) == 0 {
		return nil
	}
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	if r.db.pool == nil || len(r.reads) == 1 || HeldTx(ctx) != nil {
		q := r.db.ReadIn(ctx)
		for _, rd := range r.reads {
			if rd.rows != nil {
				rows, err := q.Query(ctx, rd.query, rd.args...)
				if err != nil {
					keep(err)
					continue
				}
				keep(rd.rows(rows))
				keep(rows.Close())
				continue
			}
			row := q.QueryRow(ctx, rd.query, rd.args...)
			keep(scanOnce(rd.row, row, func() { _ = row.Scan() }))
		}
		return first
	}
	if c, _ := ctx.Value(stmtCountKey{}).(*StmtCount); c != nil {
		c.n.Add(int64(len(r.reads)))
		c.waits.Add(1)
	}
	b := &pgx.Batch{}
	for _, rd := range r.reads {
		b.Queue(rd.query, rd.args...)
	}
	br := r.db.pool.SendBatch(ctx, b)
	for _, rd := range r.reads {
		rows, err := br.Query()
		if rd.rows != nil {
			if err != nil {
				keep(err)
				continue
			}
			keep(rd.rows(pgxRows{rows}))
			rows.Close()
			keep(rows.Err())
			continue
		}
		row := &batchedRow{rows: rows, err: err}
		keep(scanOnce(rd.row, row, row.close))
	}
	keep(br.Close())
	return first
}

// scanOnce calls scan with row and, when scan did not scan it, drains it:
// a row is only done with (its connection given back on SQLite, its result
// read off the pipeline on PostgreSQL) once scanned.
func scanOnce(scan func(Row) error, row Row, drain func()) error {
	s := &scannedRow{row: row}
	err := scan(s)
	if !s.done {
		drain()
	}
	return err
}

type scannedRow struct {
	row  Row
	done bool
}

func (s *scannedRow) Scan(dest ...any) error {
	s.done = true
	return s.row.Scan(dest...)
}

// batchedRow is one read's answer in a pipeline: its first row, if any.
type batchedRow struct {
	rows pgx.Rows
	err  error
}

func (r *batchedRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

func (r *batchedRow) close() {
	if r.err == nil {
		r.rows.Close()
	}
}
