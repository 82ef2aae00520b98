package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Delivery is one line of a subscription's delivery log.
type Delivery struct {
	ID             int64  `json:"id"`
	SubscriptionID string `json:"subscription_id"`
	// EventID is the webhook-id header of every attempt.
	EventID string `json:"event_id"`
	Event   string `json:"event"`
	Status  string `json:"status"`
	// Attempts made so far; ResponseCode, LatencyMS and LastError describe
	// the last one (ResponseCode 0: no HTTP answer).
	Attempts      int            `json:"attempts"`
	ResponseCode  int            `json:"response_code,omitempty"`
	LatencyMS     float64        `json:"latency_ms"`
	LastError     string         `json:"last_error,omitempty"`
	ReplayOf      int64          `json:"replay_of,omitempty"`
	CreatedAt     ocpi.DateTime  `json:"created_at"`
	LastAttemptAt *ocpi.DateTime `json:"last_attempt_at,omitempty"`
	// NextAttemptAt is set while the delivery waits for a retry.
	NextAttemptAt *ocpi.DateTime `json:"next_attempt_at,omitempty"`
	DeliveredAt   *ocpi.DateTime `json:"delivered_at,omitempty"`
	LastUpdated   ocpi.DateTime  `json:"last_updated"`
	// Data is the event's payload; only a single delivery carries it.
	Data json.RawMessage `json:"data,omitempty"`
}

const deliveryColumns = `id, subscription_id, event_id, event, status, attempts, response_code, latency_us, last_error, replay_of,
	created_at, last_attempt_at, next_attempt_at, delivered_at, updated_at`

func scanDelivery(row interface{ Scan(...any) error }, now int64) (*Delivery, error) {
	var d Delivery
	var latency, created, last, next, delivered, updated int64
	if err := row.Scan(&d.ID, &d.SubscriptionID, &d.EventID, &d.Event, &d.Status, &d.Attempts, &d.ResponseCode, &latency,
		&d.LastError, &d.ReplayOf, &created, &last, &next, &delivered, &updated); err != nil {
		return nil, err
	}
	d.LatencyMS = float64(latency/10) / 100
	d.CreatedAt, d.LastUpdated = ocpi.FromMicros(created), ocpi.FromMicros(updated)
	d.LastAttemptAt = optionalTime(last)
	d.DeliveredAt = optionalTime(delivered)
	if d.Status == StatusPending && next > now {
		d.NextAttemptAt = optionalTime(next)
	}
	return &d, nil
}

func optionalTime(us int64) *ocpi.DateTime {
	if us <= 0 {
		return nil
	}
	t := ocpi.FromMicros(us)
	return &t
}

// DeliveryFilter narrows a delivery log listing.
type DeliveryFilter struct {
	Status string // PENDING, DELIVERED or FAILED; "" for all
}

// DeliveryStatuses lists the delivery statuses.
func DeliveryStatuses() []string { return []string{StatusPending, StatusDelivered, StatusFailed} }

// Deliveries returns a page of a subscription's delivery log, newest first.
// Our own next-page links continue after the last delivery shown (new
// deliveries do not shift the pages); date_from and date_to filter on the
// time a delivery was created.
func (s *Service) Deliveries(ctx context.Context, owner Owner, subID string, f DeliveryFilter, req ocpi.PageRequest) ([]*Delivery, ocpi.Page, error) {
	var page ocpi.Page
	q := s.db.Read()
	if _, err := find(ctx, q, owner, subID); err != nil {
		return nil, page, err
	}
	if f.Status != "" {
		c := ocpi.NewCheck("")
		c.Enum("status", f.Status, DeliveryStatuses(), false)
		if err := c.Err(); err != nil {
			return nil, page, err
		}
	}
	conds := []string{"subscription_id = $1"}
	args := []any{subID}
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Status != "" {
		add("status = ?", f.Status)
	}
	if !req.DateFrom.IsZero() {
		add("created_at >= ?", req.DateFrom.Micros())
	}
	if !req.DateTo.IsZero() {
		add("created_at < ?", req.DateTo.Micros())
	}
	where := strings.Join(conds, " AND ")
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_deliveries WHERE "+where, args...).Scan(&page.Total); err != nil {
		return nil, page, err
	}
	offset := ""
	if req.After != nil {
		add("id < ?", req.After.Key)
		where = strings.Join(conds, " AND ")
	} else if req.Offset > 0 {
		offset = fmt.Sprintf(" OFFSET %d", req.Offset)
	}
	rows, err := q.Query(ctx, fmt.Sprintf("SELECT %s FROM webhook_deliveries WHERE %s ORDER BY id DESC LIMIT %d%s",
		deliveryColumns, where, req.Limit, offset), args...)
	if err != nil {
		return nil, page, err
	}
	now := s.now().UnixMicro()
	got, err := store.Collect(rows, func(r store.Row) (*Delivery, error) { return scanDelivery(r, now) })
	if err != nil {
		return nil, page, err
	}
	out := append([]*Delivery{}, got...)
	if len(out) > 0 {
		page.Last = &ocpi.Cursor{Offset: req.Offset + len(out), Key: out[len(out)-1].ID}
	}
	return out, page, nil
}

// Delivery returns one delivery of a subscription, with the event's data.
func (s *Service) Delivery(ctx context.Context, owner Owner, subID string, id int64) (*Delivery, error) {
	q := s.db.Read()
	if _, err := find(ctx, q, owner, subID); err != nil {
		return nil, err
	}
	return findDelivery(ctx, q, subID, id, s.now().UnixMicro())
}

func findDelivery(ctx context.Context, q store.Querier, subID string, id, now int64) (*Delivery, error) {
	d, err := scanDelivery(q.QueryRow(ctx, "SELECT "+deliveryColumns+" FROM webhook_deliveries WHERE id = $1 AND subscription_id = $2", id, subID), now)
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("subscription %s has no delivery %d", subID, id)}
	}
	if err != nil {
		return nil, err
	}
	var data string
	if err := q.QueryRow(ctx, "SELECT data FROM webhook_events WHERE id = $1", d.EventID).Scan(&data); err != nil {
		return nil, err
	}
	d.Data = json.RawMessage(data)
	return d, nil
}

// Replay sends an event of the delivery log again: a new delivery (with the
// same webhook-id, so receivers can tell a copy) at the end of the
// subscription's queue. The subscription must be active.
func (s *Service) Replay(ctx context.Context, owner Owner, subID string, id int64) (*Delivery, error) {
	var out *Delivery
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		sub, err := find(ctx, tx, owner, subID)
		if err != nil {
			return err
		}
		orig, err := findDelivery(ctx, tx, subID, id, 0)
		if err != nil {
			return err
		}
		if sub.Status != StatusActive {
			return &ocpi.Error{Code: ocpi.EINVALID, Message: "the subscription is disabled (" + sub.DisabledReason + "); enable it (PATCH status ACTIVE) before replaying"}
		}
		now := s.now().UnixMicro()
		var newID int64
		if err := tx.QueryRow(ctx, `INSERT INTO webhook_deliveries (subscription_id, event_id, event, status, replay_of, next_attempt_at, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6, $6) RETURNING id`, subID, orig.EventID, orig.Event, StatusPending, orig.ID, now).Scan(&newID); err != nil {
			return err
		}
		var receiver int64
		if err := tx.QueryRow(ctx, "SELECT id FROM webhook_receivers WHERE subscription_id = $1", subID).Scan(&receiver); err != nil {
			return err
		}
		s.wake(tx, []int64{receiver})
		out, err = findDelivery(ctx, tx, subID, newID, now)
		return err
	})
	return out, err
}
