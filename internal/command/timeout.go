package command

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/lease"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// A command's deadline is a column of its row (commands.deadline, indexed
// while the command is open), and each running hub sweeps the deadlines
// once a second (Start): storing a command writes no job. Until this
// release every command had a job of its own, inserted with it; that River
// insert was about a quarter of the CPU a relayed command cost on SQLite,
// and it held the request's group-commit batch that much longer. The sweep
// is a loop of the process rather than a periodic job: a job a second
// would be two write transactions a second and a day's 86 400 finished
// jobs in River's table, where the loop reads one index and writes only
// what times out. Several replicas sweep alike; a command's row lock
// decides which one closes it.

// timeoutSweepEvery is how often the sweep looks for commands past their
// deadline: a command times out at most this late. Deadlines are the CPO's
// timeout plus a margin (30 s by default), so a second is noise.
const timeoutSweepEvery = time.Second

// timeoutSweepPage bounds the commands one query of the sweep returns; it
// goes on until a page comes back short.
const timeoutSweepPage = 100

// Start sweeps the deadlines of open commands every second until Stop.
func (s *Service) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopSweep != nil {
		return
	}
	// The loop that keeps a delivery's lease: fn every interval until stop.
	s.stopSweep = lease.Keep(store.Background(ctx), timeoutSweepEvery, s.sweepTimeouts, func(ctx context.Context, err error) {
		if ctx.Err() == nil { // not the sweep interrupted by Stop
			s.logger.WarnContext(ctx, "could not time out the commands past their deadline; trying again in a second", "error", err)
		}
	})
}

// Stop ends the sweep and waits for it. A timeout it was writing is
// rolled back and written by the next sweep, after a restart or on
// another replica.
func (s *Service) Stop() {
	s.mu.Lock()
	stop := s.stopSweep
	s.stopSweep = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// sweepTimeouts times out the open commands past their deadline, oldest
// deadline first. Each is closed in a transaction of its own that reads
// the row again under its lock (expire), so a result that arrived since
// the query, or another replica's sweep, wins or finds nothing to do.
func (s *Service) sweepTimeouts(ctx context.Context) error {
	for {
		// The states are written out, as in the partial index's condition:
		// bound parameters cannot prove a row is in that index.
		rows, err := s.db.Read().Query(ctx, `SELECT id FROM commands WHERE state IN ('`+StateForwarding+`', '`+StateAccepted+`', '`+
			StateUnconfirmed+`') AND deadline <= $1 ORDER BY deadline LIMIT $2`, s.now(), timeoutSweepPage)
		if err != nil {
			return err
		}
		ids, err := store.Collect(rows, func(r store.Row) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := s.expire(ctx, id); err != nil {
				return err
			}
		}
		if len(ids) < timeoutSweepPage {
			return nil
		}
	}
}

// TimeoutArgs is the job that timed one command out, as stored with each
// command by earlier releases. Its worker stays for the jobs such a
// release left queued; the sweep would close those commands as well.
type TimeoutArgs struct {
	CommandID string `json:"command_id"`
}

// Kind implements river.JobArgs.
func (TimeoutArgs) Kind() string { return "command_timeout" }

// timeOut works a TimeoutArgs job: it waits (snoozes) until the command's
// deadline when that is later.
func (s *Service) timeOut(ctx context.Context, a TimeoutArgs) error {
	wait, err := s.expire(ctx, a.CommandID)
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}

// expire times a command out when it is still open past its deadline: a
// command gets a TIMEOUT result relayed like a CPO's; a charging profile
// request (whose results have no TIMEOUT value) is closed without one. A
// command whose deadline is later is left open, and wait says how long
// until it.
func (s *Service) expire(ctx context.Context, id string) (wait time.Duration, err error) {
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, err := lockCommand(ctx, tx, id)
		if ocpi.IsNotFound(err) {
			return nil
		}
		if err != nil || !isOpen(cur.State) {
			return err
		}
		if cur.Deadline != nil && cur.Deadline.Micros() > s.now() {
			wait = time.Duration(cur.Deadline.Micros()-s.now()) * time.Microsecond
			return nil
		}
		result := ""
		if cur.Module == Module {
			result = ocpi.CommandTimeout
		}
		if _, err := tx.Exec(ctx, "UPDATE commands SET state = $1, result = $2, updated_at = $3 WHERE id = $4",
			StateTimeout, result, s.now(), cur.ID); err != nil {
			return err
		}
		s.logger.InfoContext(ctx, "command timed out", "command_id", cur.ID, "command", cur.Command, "state", cur.State)
		if cur.Module != Module {
			return nil
		}
		body, _ := json.Marshal(ocpi.CommandResult{Result: ocpi.CommandTimeout, Message: []ocpi.DisplayText{{Language: "en",
			Text: "The CPO reported no result within its timeout."}}})
		return s.addResult(ctx, tx, cur, "hub", ocpi.CommandTimeout, body, RelayPending)
	})
	return wait, err
}
