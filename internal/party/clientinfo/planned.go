package clientinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party/ident"
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
func (b *Book) WithdrawPlanned(ctx context.Context) ([]ident.PartyRef, error) {
	var out []ident.PartyRef
	err := b.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		out, err = b.WithdrawPlannedTx(ctx, tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	b.LogWithdrawn(ctx, out)
	return out, nil
}

// LogWithdrawn logs each withdrawn planned party.
func (b *Book) LogWithdrawn(ctx context.Context, refs []ident.PartyRef) {
	for _, r := range refs {
		b.logger.InfoContext(ctx, "planned party withdrawn: no open invitation names it", "role", r.Role, "country_code", r.CountryCode, "party_id", r.PartyID)
	}
}

// WithdrawPlannedTx is WithdrawPlanned inside tx.
func (b *Book) WithdrawPlannedTx(ctx context.Context, tx *store.Tx) ([]ident.PartyRef, error) {
	now := b.clock.Now().UnixMicro()
	type planned struct {
		ref ident.PartyRef
		lu  int64
	}
	candidates, err := store.QueryAll(ctx, tx, func(row store.Row) (planned, error) {
		var p planned
		var role string
		err := row.Scan(&role, &p.ref.CountryCode, &p.ref.PartyID, &p.lu)
		p.ref.Role = ident.Role(role)
		return p, err
	}, "SELECT role, country_code, party_id, last_updated FROM client_info WHERE status = $1", Planned)
	if err != nil || len(candidates) == 0 {
		return nil, err
	}
	open := map[ident.PartyRef]bool{}
	rows, err := tx.Query(ctx, "SELECT parties FROM invitations WHERE used_at IS NULL AND expires_at > $1 AND parties IS NOT NULL", now)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			rows.Close()
			return nil, err
		}
		var refs []ident.PartyRef
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
	var out []ident.PartyRef
	for _, p := range candidates {
		if open[keyRef(p.ref)] {
			continue
		}
		// The row goes only as read: an invitation planning the party anew
		// meanwhile has touched last_updated (Invite), and keeps it.
		n, err := tx.Exec(ctx, "DELETE FROM client_info WHERE role = $1 AND country_code = $2 AND party_id = $3 AND status = $4 AND last_updated = $5",
			string(p.ref.Role), p.ref.CountryCode, p.ref.PartyID, Planned, p.lu)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			continue
		}
		ci := ClientInfo{PartyID: p.ref.PartyID, CountryCode: p.ref.CountryCode, Role: string(p.ref.Role), Status: Suspended, LastUpdated: ocpi.FromMicros(now)}
		if err := b.cfg.Events.Emit(ctx, tx, event.Event{Name: event.PartyStatusChanged, Data: ci, Public: true,
			Parties: []event.Party{{Role: ci.Role, CountryCode: ci.CountryCode, PartyID: ci.PartyID}}}); err != nil {
			return nil, err
		}
		out = append(out, p.ref)
	}
	return out, b.EnqueueClientInfo(ctx, tx, 0, out, now)
}

func keyRef(r ident.PartyRef) ident.PartyRef {
	return ident.PartyRef{Role: r.Role, CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID)}
}

// PlannedSweepArgs is the periodic withdrawal of planned parties whose
// invitations expired.
type PlannedSweepArgs struct{}

// Kind implements river.JobArgs.
func (PlannedSweepArgs) Kind() string { return "party_planned_sweep" }

// SchedulePlannedSweep runs WithdrawPlanned every minute (on the leader
// only).
func (b *Book) SchedulePlannedSweep() {
	b.jobs.Every(time.Minute, PlannedSweepArgs{}, "party_planned_sweep")
}
