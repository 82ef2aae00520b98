package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ids"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

var _ event.Emitter = (*Service)(nil)

// Emit implements event.Emitter: inside tx, it stores the event and a
// PENDING delivery per active subscription that receives it, and wakes the
// delivery engine for those subscriptions once tx has committed (another
// process's engine finds them by polling). An event nobody subscribed to
// leaves no trace. An unknown event name is a programming error.
//
// On PostgreSQL, an event no subscription this process knows of names (most
// EVSE status changes) is stored by one statement queued with the
// transaction's others (emitUnseen): the subscribers' lookup would be a
// round trip of its own inside the transaction of the event's cause, a
// third of an EVSE status PATCH's time on the writer there. See subscribed.
func (s *Service) Emit(ctx context.Context, tx *store.Tx, e event.Event) error {
	if !event.Known(e.Name) {
		return fmt.Errorf("webhook: emit of unknown event %q", e.Name)
	}
	if tx.Engine() == store.Postgres && s.knownUnsubscribed(e.Name) {
		return s.emitUnseen(ctx, tx, e)
	}
	return s.emitMatched(ctx, tx, e)
}

// emitMatched looks the subscribers of e up, stores e with a delivery for
// each, and wakes them once tx commits.
func (s *Service) emitMatched(ctx context.Context, tx *store.Tx, e event.Event) error {
	subs, err := matching(ctx, tx, e)
	if err != nil {
		return fmt.Errorf("webhook: find subscribers of %s: %w", e.Name, err)
	}
	if len(subs) == 0 {
		return nil
	}
	data, err := encodeData(e)
	if err != nil {
		return err
	}
	now := s.now().UnixMicro()
	id := ids.New()
	if err := tx.ExecLater(ctx, "INSERT INTO webhook_events (id, name, data, created_at) VALUES ($1, $2, $3, $4)", id, e.Name, string(data), now); err != nil {
		return fmt.Errorf("webhook: store event: %w", err)
	}
	var sb strings.Builder
	sb.WriteString("INSERT INTO webhook_deliveries (subscription_id, event_id, event, status, next_attempt_at, created_at, updated_at) VALUES ")
	args := []any{id, e.Name, StatusPending, now}
	receivers := make([]int64, len(subs))
	for i, sub := range subs {
		if i > 0 {
			sb.WriteString(", ")
		}
		args = append(args, sub.id)
		receivers[i] = sub.receiver
		fmt.Fprintf(&sb, "($%d, $1, $2, $3, $4, $4, $4)", len(args))
	}
	if err := tx.ExecLater(ctx, sb.String(), args...); err != nil {
		return fmt.Errorf("webhook: store deliveries: %w", err)
	}
	s.wake(tx, receivers)
	return nil
}

// emitUnseen stores e and its deliveries on PostgreSQL in one statement the
// transaction sends with its next (store.Tx.ExecLater): the event row only
// when a subscription receives it, and a delivery for each, found by the
// same conditions as matching. Nothing is woken: the delivery engine's poll
// finds what it stored.
func (s *Service) emitUnseen(ctx context.Context, tx *store.Tx, e event.Event) error {
	data, err := encodeData(e)
	if err != nil {
		return err
	}
	now := s.now().UnixMicro()
	from, args := matchFrom(e, []any{ids.New(), string(data), now, StatusPending})
	// $5 is the event's name (matchFrom's first).
	err = tx.ExecLater(ctx, `WITH ev AS (INSERT INTO webhook_events (id, name, data, created_at)
			SELECT $1::text, $5::text, $2::text, $3::bigint WHERE EXISTS (SELECT 1 `+from+`) RETURNING id)
		INSERT INTO webhook_deliveries (subscription_id, event_id, event, status, next_attempt_at, created_at, updated_at)
		SELECT s.id, ev.id, $5::text, $4::text, $3::bigint, $3::bigint, $3::bigint FROM ev, (SELECT s.id `+from+`) s`, args...)
	if err != nil {
		return fmt.Errorf("webhook: store event: %w", err)
	}
	return nil
}

// encodeData is an event's payload as stored.
func encodeData(e event.Event) ([]byte, error) {
	if e.Data == nil {
		return []byte("{}"), nil
	}
	data, err := json.Marshal(e.Data)
	if err != nil {
		return nil, fmt.Errorf("webhook: encode %s data: %w", e.Name, err)
	}
	return data, nil
}

// subscriber is a subscription that receives an event: its id and its
// receiver number in the delivery engine.
type subscriber struct {
	id       string
	receiver int64
}

// matching returns the active subscriptions that receive e, with their
// receiver numbers, in the order of their ids.
func matching(ctx context.Context, q store.Querier, e event.Event) ([]subscriber, error) {
	from, args := matchFrom(e, nil)
	rows, err := q.Query(ctx, "SELECT s.id, r.id "+from+" ORDER BY s.id", args...)
	if err != nil {
		return nil, err
	}
	return store.Collect(rows, func(r store.Row) (sub subscriber, err error) {
		err = r.Scan(&sub.id, &sub.receiver)
		return sub, err
	})
}

// matchFrom returns the FROM and WHERE clauses of the active subscriptions
// (s) with their receivers (r) that receive e: the operator's (platform 0)
// that name the event, and those of connected platforms when e is public
// or names one of the platform's parties. Its arguments follow args, the
// event's name first.
func matchFrom(e event.Event, args []any) (string, []any) {
	n := len(args)
	ph := func(i int) string { return "$" + strconv.Itoa(n+i) }
	args = append(args, e.Name, StatusActive, e.Public)
	var parties []string
	for _, p := range e.Parties {
		cond := fmt.Sprintf("(pr.country_code = $%d AND pr.party_id = $%d", len(args)+1, len(args)+2)
		args = append(args, ocpi.Key(p.CountryCode), ocpi.Key(p.PartyID))
		if p.Role != "" {
			args = append(args, strings.ToUpper(p.Role))
			cond += " AND pr.role = $" + strconv.Itoa(len(args))
		}
		parties = append(parties, cond+")")
	}
	partyCond := "FALSE"
	if len(parties) > 0 {
		partyCond = "EXISTS (SELECT 1 FROM platform_roles pr WHERE pr.platform_id = s.platform_id AND (" + strings.Join(parties, " OR ") + "))"
	}
	return `FROM webhook_subscriptions s
		JOIN webhook_subscription_events e ON e.subscription_id = s.id AND e.event = ` + ph(1) + `
		JOIN webhook_receivers r ON r.subscription_id = s.id
		WHERE s.status = ` + ph(2) + ` AND (s.platform_id = 0 OR (
			EXISTS (SELECT 1 FROM platforms p WHERE p.id = s.platform_id AND p.status = 'CONNECTED')
			AND (` + ph(3) + ` OR ` + partyCond + `)))`, args
}
