package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

var _ event.Emitter = (*Service)(nil)

// Emit implements event.Emitter: inside tx, it finds the active
// subscriptions that receive e and stores the event, a PENDING delivery per
// subscription, and wakes the delivery engine for those subscriptions once
// tx has committed (another process's engine finds them by polling). An
// event nobody
// subscribed to leaves no trace. An unknown event name is a programming
// error.
func (s *Service) Emit(ctx context.Context, tx *store.Tx, e event.Event) error {
	if !event.Known(e.Name) {
		return fmt.Errorf("webhook: emit of unknown event %q", e.Name)
	}
	subs, err := matching(ctx, tx, e)
	if err != nil {
		return fmt.Errorf("webhook: find subscribers of %s: %w", e.Name, err)
	}
	if len(subs) == 0 {
		return nil
	}
	data := []byte("{}")
	if e.Data != nil {
		if data, err = json.Marshal(e.Data); err != nil {
			return fmt.Errorf("webhook: encode %s data: %w", e.Name, err)
		}
	}
	now := s.now().UnixMicro()
	id := uuid.NewString()
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

// subscriber is a subscription that receives an event: its id and its
// receiver number in the delivery engine.
type subscriber struct {
	id       string
	receiver int64
}

// matching returns the active subscriptions that receive e: the
// operator's (platform 0) that name the event, and those of connected
// platforms when e is public or names one of the platform's parties.
func matching(ctx context.Context, q store.Querier, e event.Event) ([]subscriber, error) {
	args := []any{e.Name, StatusActive, e.Public}
	var parties []string
	for _, p := range e.Parties {
		cond := fmt.Sprintf("(r.country_code = $%d AND r.party_id = $%d", len(args)+1, len(args)+2)
		args = append(args, ocpi.Key(p.CountryCode), ocpi.Key(p.PartyID))
		if p.Role != "" {
			args = append(args, strings.ToUpper(p.Role))
			cond += " AND r.role = $" + strconv.Itoa(len(args))
		}
		parties = append(parties, cond+")")
	}
	partyCond := "FALSE"
	if len(parties) > 0 {
		partyCond = "EXISTS (SELECT 1 FROM platform_roles r WHERE r.platform_id = s.platform_id AND (" + strings.Join(parties, " OR ") + "))"
	}
	rows, err := q.Query(ctx, `SELECT s.id, r.id FROM webhook_subscriptions s
		JOIN webhook_subscription_events e ON e.subscription_id = s.id AND e.event = $1
		JOIN webhook_receivers r ON r.subscription_id = s.id
		WHERE s.status = $2 AND (s.platform_id = 0 OR (
			EXISTS (SELECT 1 FROM platforms p WHERE p.id = s.platform_id AND p.status = 'CONNECTED')
			AND ($3 OR `+partyCond+`)))
		ORDER BY s.id`, args...)
	if err != nil {
		return nil, err
	}
	return store.Collect(rows, func(r store.Row) (sub subscriber, err error) {
		err = r.Scan(&sub.id, &sub.receiver)
		return sub, err
	})
}
