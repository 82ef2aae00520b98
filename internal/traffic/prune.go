package traffic

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/store"
)

// pruneBatch is how many rows one delete removes: short transactions that
// never hold the writer for long.
const pruneBatch = 1000

// Prune removes exchanges older than the retention, then the oldest until
// the stored size is under the cap, in batches. It returns how many it
// removed.
func (r *Recorder) Prune(ctx context.Context) (int64, error) {
	ctx = store.Background(ctx)
	cutoff := r.clock.Now().Add(-r.cfg.Retention).UnixMicro()
	// Ids follow time (an exchange is stored seconds after it started), and
	// only the key is indexed besides the correlation: everything before
	// the first exchange inside the retention goes, by id.
	var first int64
	var total int64
	err := r.db.Read().QueryRow(ctx, "SELECT id FROM traffic WHERE at >= $1 ORDER BY id LIMIT 1", cutoff).Scan(&first)
	switch {
	case errors.Is(err, store.ErrNoRows):
		total, err = r.deleteWhile(ctx, "at < $1", cutoff)
	case err == nil:
		total, err = r.deleteWhile(ctx, "id < $1", first)
	}
	if err != nil {
		return total, err
	}
	var size int64
	if err := r.db.Read().QueryRow(ctx, "SELECT COALESCE(SUM(size), 0) FROM traffic").Scan(&size); err != nil {
		return total, err
	}
	if size <= r.cfg.MaxBytes {
		r.metrics.pruned.Add(float64(total))
		return total, nil
	}
	// The oldest rows whose sizes add up to the excess go.
	excess := size - r.cfg.MaxBytes
	rows, err := r.db.Read().Query(ctx, "SELECT id, size FROM traffic ORDER BY id")
	if err != nil {
		return total, err
	}
	var last, freed int64
	for rows.Next() && freed < excess {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return total, err
		}
		last, freed = id, freed+n
	}
	if err := rows.Close(); err != nil {
		return total, err
	}
	n, err := r.deleteWhile(ctx, "id <= $1", last)
	total += n
	r.metrics.pruned.Add(float64(total))
	return total, err
}

// deleteWhile deletes the rows matching cond (one argument) in batches.
func (r *Recorder) deleteWhile(ctx context.Context, cond string, v int64) (int64, error) {
	return r.db.DeleteBatches(ctx, pruneBatch,
		"DELETE FROM traffic WHERE id IN (SELECT id FROM traffic WHERE "+cond+" ORDER BY id LIMIT "+strconv.Itoa(pruneBatch)+")", v)
}

// Schedule registers the prune job on jc and runs it every interval (a
// minute when 0).
func (r *Recorder) Schedule(jc *jobs.Client, interval time.Duration) {
	if interval <= 0 {
		interval = time.Minute
	}
	jobs.AddWorker(jc, jobs.CountedTask[pruneArgs](r.Prune))
	jc.Every(interval, pruneArgs{}, "")
}

type pruneArgs struct{}

// Kind implements river.JobArgs.
func (pruneArgs) Kind() string { return "traffic_prune" }
