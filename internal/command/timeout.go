package command

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TimeoutArgs is the job that closes a command whose result did not come by
// its deadline. It is due at the earliest possible deadline and waits
// (snoozes) until the command's current one.
type TimeoutArgs struct {
	CommandID string `json:"command_id"`
}

// Kind implements river.JobArgs.
func (TimeoutArgs) Kind() string { return "command_timeout" }

// timeOut times a command out when it is still open past its deadline: a
// command gets a TIMEOUT result relayed like a CPO's; a charging profile
// request (whose results have no TIMEOUT value) is closed without one. A
// command whose deadline is later waits for it.
func (s *Service) timeOut(ctx context.Context, a TimeoutArgs) error {
	var wait time.Duration
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, err := lockCommand(ctx, tx, a.CommandID)
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
	if err != nil {
		return err
	}
	if wait > 0 {
		return river.JobSnooze(wait)
	}
	return nil
}
