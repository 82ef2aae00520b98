package party

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// A party is PLANNED in HubClientInfo only while an open invitation (not
// used, not expired, not revoked) names it. When the last one closes
// without registering the party — it expired, was revoked, or was used to
// register its other parties only — the party will not come, and decided
// here (the spec has no deletion, hubclientinfo.md §1, and speaks of
// invalidation only as a PUT with SUSPENDED, §3):
//   - its row leaves the hub's client info list: the party never existed
//     for partners, so the sender stops listing it rather than list it
//     SUSPENDED forever;
//   - every connected platform with a hubclientinfo receiver gets a PUT of
//     it with status SUSPENDED ("do not send", the spec's invalidation),
//     since it may hold the PLANNED it was pushed. A partner that only
//     pulls with date_from does not learn of the withdrawal: it never sees
//     the party again, and PLANNED already meant "do not send".
//
// Expiry is found by a sweep every minute (SchedulePlannedSweep), so a
// party stays PLANNED up to a minute past its invitation's expiry;
// revocation withdraws at once.

// WithdrawPlanned withdraws every PLANNED party that no open invitation
// names any more and returns them.
func (s *Service) WithdrawPlanned(ctx context.Context) ([]PartyRef, error) {
	var out []PartyRef
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		out, err = s.withdrawPlanned(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.logWithdrawn(ctx, out)
	return out, nil
}

func (s *Service) logWithdrawn(ctx context.Context, refs []PartyRef) {
	for _, r := range refs {
		s.logger.InfoContext(ctx, "planned party withdrawn: no open invitation names it", "role", r.Role, "country_code", r.CountryCode, "party_id", r.PartyID)
	}
}

// RevokeInvitation closes an open invitation at once: its token A stops
// working and the parties it alone planned are withdrawn. A revoked
// invitation is listed as REVOKED.
func (s *Service) RevokeInvitation(ctx context.Context, id int64) error {
	var withdrawn []PartyRef
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.now()
		n, err := tx.Exec(ctx, "UPDATE invitations SET expires_at = $1, revoked_at = $1 WHERE id = $2 AND used_at IS NULL AND expires_at > $1", now, id)
		if err != nil {
			return err
		}
		if n == 0 {
			return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("no open invitation %d: it was used, has expired or does not exist", id)}
		}
		withdrawn, err = s.withdrawPlanned(ctx, tx)
		return err
	})
	if err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "invitation revoked", "invitation_id", id)
	s.logWithdrawn(ctx, withdrawn)
	return nil
}

// withdrawPlanned is WithdrawPlanned inside tx.
func (s *Service) withdrawPlanned(ctx context.Context, tx *store.Tx) ([]PartyRef, error) {
	now := s.now()
	type planned struct {
		ref PartyRef
		lu  int64
	}
	var candidates []planned
	rows, err := tx.Query(ctx, "SELECT role, country_code, party_id, last_updated FROM client_info WHERE status = $1", ClientPlanned)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var p planned
		var role string
		if err := rows.Scan(&role, &p.ref.CountryCode, &p.ref.PartyID, &p.lu); err != nil {
			rows.Close()
			return nil, err
		}
		p.ref.Role = Role(role)
		candidates = append(candidates, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(candidates) == 0 {
		return nil, err
	}
	open := map[PartyRef]bool{}
	rows, err = tx.Query(ctx, "SELECT parties FROM invitations WHERE used_at IS NULL AND expires_at > $1 AND parties IS NOT NULL", now)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return nil, err
		}
		var refs []PartyRef
		if err := json.Unmarshal(raw, &refs); err != nil {
			rows.Close()
			return nil, fmt.Errorf("invitation parties: %w", err)
		}
		for _, r := range refs {
			open[keyRef(r)] = true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []PartyRef
	for _, p := range candidates {
		if open[keyRef(p.ref)] {
			continue
		}
		// The row goes only as read: an invitation planning the party anew
		// meanwhile has touched last_updated (Invite), and keeps it.
		n, err := tx.Exec(ctx, "DELETE FROM client_info WHERE role = $1 AND country_code = $2 AND party_id = $3 AND status = $4 AND last_updated = $5",
			string(p.ref.Role), p.ref.CountryCode, p.ref.PartyID, ClientPlanned, p.lu)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		ci := ClientInfo{PartyID: p.ref.PartyID, CountryCode: p.ref.CountryCode, Role: string(p.ref.Role), Status: ClientSuspended, LastUpdated: ocpi.FromMicros(now)}
		if err := s.cfg.Events.Emit(ctx, tx, event.Event{Name: event.PartyStatusChanged, Data: ci, Public: true,
			Parties: []event.Party{{Role: ci.Role, CountryCode: ci.CountryCode, PartyID: ci.PartyID}}}); err != nil {
			return nil, err
		}
		out = append(out, p.ref)
	}
	return out, s.EnqueueClientInfo(ctx, tx, 0, out, now)
}

func keyRef(r PartyRef) PartyRef {
	return PartyRef{Role: r.Role, CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID)}
}

// PlannedSweepArgs is the periodic withdrawal of planned parties whose
// invitations expired.
type PlannedSweepArgs struct{}

// Kind implements river.JobArgs.
func (PlannedSweepArgs) Kind() string { return "party_planned_sweep" }

type plannedSweepWorker struct {
	river.WorkerDefaults[PlannedSweepArgs]
	s *Service
}

func (w *plannedSweepWorker) Work(ctx context.Context, job *river.Job[PlannedSweepArgs]) error {
	_, err := w.s.WithdrawPlanned(ctx)
	return err
}

// SchedulePlannedSweep runs WithdrawPlanned every minute (on the leader
// only).
func (s *Service) SchedulePlannedSweep() {
	s.jobs.AddPeriodic(river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return PlannedSweepArgs{}, nil },
		&river.PeriodicJobOpts{ID: "party_planned_sweep"}))
}
