package webhook

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Subscription statuses.
const (
	StatusActive   = "ACTIVE"
	StatusDisabled = "DISABLED"
)

// Owner selects whose subscriptions an operation sees: a partner platform
// (PlatformID), the operator (PlatformID 0), or, in the admin API, every
// owner (All). Another owner's subscription is not found (HTTP 404).
type Owner struct {
	PlatformID int64
	All        bool
}

// Subscription is an outgoing webhook subscription (seed §2.18 plus our
// bookkeeping).
type Subscription struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// Secret is shown once: in the answer that created the subscription.
	Secret         string         `json:"secret,omitempty"`
	Status         string         `json:"status"`
	DisabledReason string         `json:"disabled_reason,omitempty"`
	FailingSince   *ocpi.DateTime `json:"failing_since,omitempty"`
	// PlatformID is the owning platform (absent for the operator's).
	PlatformID  int64         `json:"platform_id,omitempty"`
	CreatedAt   ocpi.DateTime `json:"created_at"`
	LastUpdated ocpi.DateTime `json:"last_updated"`

	secret   string // the stored form: sealed, or marked plain (sealbox)
	failures int
}

// Input is the body of a create (POST), replace (PUT) or update (PATCH).
// Absent fields are nil.
type Input struct {
	URL    *string  `json:"url,omitempty"`
	Events []string `json:"events,omitempty"`
	Secret *string  `json:"secret,omitempty"`
	Status *string  `json:"status,omitempty"`
}

const subscriptionColumns = "id, platform_id, url, secret, status, disabled_reason, failures, failing_since, created_at, updated_at"

func scanSubscription(row store.Row) (*Subscription, error) {
	var sub Subscription
	var failingSince, created, updated int64
	if err := row.Scan(&sub.ID, &sub.PlatformID, &sub.URL, &sub.secret, &sub.Status, &sub.DisabledReason,
		&sub.failures, &failingSince, &created, &updated); err != nil {
		return nil, err
	}
	if failingSince > 0 {
		fs := ocpi.FromMicros(failingSince)
		sub.FailingSince = &fs
	}
	sub.CreatedAt, sub.LastUpdated = ocpi.FromMicros(created), ocpi.FromMicros(updated)
	return &sub, nil
}

// ownerWhere returns the SQL condition selecting owner's subscriptions,
// with its placeholder numbered n.
func ownerWhere(owner Owner, n int) (string, []any) {
	if owner.All {
		return "TRUE", nil
	}
	return "platform_id = $" + strconv.Itoa(n), []any{owner.PlatformID}
}

func notFound(id string) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no webhook subscription " + strconv.Quote(id)}
}

// find loads a subscription of owner with its events.
func find(ctx context.Context, q store.Querier, owner Owner, id string) (*Subscription, error) {
	cond, args := ownerWhere(owner, 2)
	sub, err := scanSubscription(q.QueryRow(ctx, "SELECT "+subscriptionColumns+" FROM webhook_subscriptions WHERE id = $1 AND "+cond, append([]any{id}, args...)...))
	if errors.Is(err, store.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	if err := loadEvents(ctx, q, []*Subscription{sub}); err != nil {
		return nil, err
	}
	return sub, nil
}

// loadEvents fills the event lists of subs.
func loadEvents(ctx context.Context, q store.Querier, subs []*Subscription) error {
	if len(subs) == 0 {
		return nil
	}
	byID := make(map[string]*Subscription, len(subs))
	ph := make([]string, len(subs))
	args := make([]any, len(subs))
	for i, sub := range subs {
		byID[sub.ID] = sub
		sub.Events = []string{}
		ph[i] = "$" + strconv.Itoa(i+1)
		args[i] = sub.ID
	}
	rows, err := q.Query(ctx, "SELECT subscription_id, event FROM webhook_subscription_events WHERE subscription_id IN ("+strings.Join(ph, ", ")+") ORDER BY event", args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		byID[id].Events = append(byID[id].Events, name)
	}
	return rows.Err()
}

// Find returns one of owner's subscriptions.
func (s *Service) Find(ctx context.Context, owner Owner, id string) (*Subscription, error) {
	return find(ctx, s.db.Read(), owner, id)
}

// List returns a page of owner's subscriptions, oldest first. platformID,
// when not zero with owner.All, narrows the listing to one platform.
func (s *Service) List(ctx context.Context, owner Owner, platformID int64, req ocpi.PageRequest) ([]*Subscription, ocpi.Page, error) {
	cond, args := ownerWhere(owner, 1)
	if owner.All && platformID != 0 {
		cond, args = "platform_id = $1", []any{platformID}
	}
	q := s.db.Read()
	out, total, err := store.CountedPage(ctx, q, subscriptionColumns, "webhook_subscriptions", " WHERE "+cond, "created_at, id",
		req.Limit, req.Offset, args, scanSubscription)
	if err != nil {
		return nil, ocpi.Page{}, err
	}
	if out == nil {
		out = []*Subscription{}
	}
	return out, ocpi.Page{Total: total}, loadEvents(ctx, q, out)
}

// Create adds a subscription for owner. Without a secret one is generated;
// the answer carries the secret, and no later answer does.
func (s *Service) Create(ctx context.Context, owner Owner, in Input) (*Subscription, error) {
	if owner.All {
		return nil, errors.New("webhook: create needs one owner")
	}
	c := ocpi.NewCheck("")
	c.Required("url", in.URL != nil && *in.URL != "")
	c.Required("events", in.Events != nil)
	events := s.check(c, in)
	if err := c.Err(); err != nil {
		return nil, err
	}
	secret := NewSecret()
	if in.Secret != nil {
		secret = *in.Secret
	}
	status := StatusActive
	if in.Status != nil {
		status = *in.Status
	}
	now := s.now().UnixMicro()
	sub := &Subscription{ID: uuid.NewString(), URL: *in.URL, Events: events, Secret: secret, Status: status, PlatformID: owner.PlatformID,
		CreatedAt: ocpi.FromMicros(now), LastUpdated: ocpi.FromMicros(now)}
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM webhook_subscriptions WHERE platform_id = $1", owner.PlatformID).Scan(&n); err != nil {
			return err
		}
		if n >= s.cfg.MaxSubscriptions {
			return &ocpi.Error{Code: ocpi.EINVALID, Message: fmt.Sprintf("you have %d webhook subscriptions, the most allowed; delete one or add events to an existing one", n)}
		}
		s.forgetSubscribed(tx)
		if _, err := tx.Exec(ctx, `INSERT INTO webhook_subscriptions (id, platform_id, url, secret, status, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6)`, sub.ID, owner.PlatformID, sub.URL, s.cfg.Box.Seal(secret), status, now); err != nil {
			return err
		}
		// Its number as a receiver of the delivery engine.
		if _, err := tx.Exec(ctx, "INSERT INTO webhook_receivers (subscription_id) VALUES ($1)", sub.ID); err != nil {
			return err
		}
		return setEvents(ctx, tx, sub.ID, events)
	})
	if err != nil {
		return nil, err
	}
	return sub, nil
}

// Replace is PUT: url and events are required; an absent secret or status
// keeps the current one.
func (s *Service) Replace(ctx context.Context, owner Owner, id string, in Input) (*Subscription, error) {
	c := ocpi.NewCheck("")
	c.Required("url", in.URL != nil && *in.URL != "")
	c.Required("events", in.Events != nil)
	return s.update(ctx, owner, id, in, c)
}

// Update is PATCH: the fields present change, the others stay.
func (s *Service) Update(ctx context.Context, owner Owner, id string, in Input) (*Subscription, error) {
	c := ocpi.NewCheck("")
	if in.URL == nil && in.Events == nil && in.Secret == nil && in.Status == nil {
		c.Fail("body", "names none of url, events, secret, status")
	}
	return s.update(ctx, owner, id, in, c)
}

func (s *Service) update(ctx context.Context, owner Owner, id string, in Input, c *ocpi.Check) (*Subscription, error) {
	events := s.check(c, in)
	if err := c.Err(); err != nil {
		return nil, err
	}
	var out *Subscription
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		sub, err := find(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		now := s.now()
		if in.URL != nil {
			sub.URL = *in.URL
		}
		if in.Secret != nil {
			sub.secret = s.cfg.Box.Seal(*in.Secret)
		}
		s.forgetSubscribed(tx)
		if in.Events != nil {
			sub.Events = events
			if err := setEvents(ctx, tx, sub.ID, events); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, "UPDATE webhook_subscriptions SET url = $1, secret = $2, updated_at = $3 WHERE id = $4",
			sub.URL, sub.secret, now.UnixMicro(), sub.ID); err != nil {
			return err
		}
		if in.Status != nil && *in.Status != sub.Status {
			if *in.Status == StatusDisabled {
				err = s.disable(ctx, tx, sub, "disabled by its owner", now, false)
			} else {
				err = enable(ctx, tx, sub.ID, now)
			}
			if err != nil {
				return err
			}
		}
		out, err = find(ctx, tx, owner, id)
		return err
	})
	return out, err
}

// Delete removes a subscription with its delivery log.
func (s *Service) Delete(ctx context.Context, owner Owner, id string) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		cond, args := ownerWhere(owner, 2)
		n, err := tx.Exec(ctx, "DELETE FROM webhook_subscriptions WHERE id = $1 AND "+cond, append([]any{id}, args...)...)
		if err != nil {
			return err
		}
		if n == 0 {
			return notFound(id)
		}
		return nil
	})
}

// check validates the fields present in in and returns the event list
// without duplicates.
func (s *Service) check(c *ocpi.Check, in Input) []string {
	if in.URL != nil && *in.URL != "" {
		s.checkURL(c, "url", *in.URL)
	}
	var events []string
	if in.Events != nil {
		if len(in.Events) == 0 {
			c.Fail("events", "must name at least one event; known events: %s", strings.Join(event.Names(), ", "))
		}
		var unknown []string
		first := -1
		for i, name := range in.Events {
			if !event.Known(name) {
				unknown = append(unknown, strconv.Quote(name))
				if first < 0 {
					first = i
				}
				continue
			}
			if !slices.Contains(events, name) {
				events = append(events, name)
			}
		}
		if len(unknown) > 0 {
			noun := "event"
			if len(unknown) > 1 {
				noun = "events"
			}
			c.Fail("events["+strconv.Itoa(first)+"]", "unknown %s %s; known events: %s",
				noun, strings.Join(unknown, ", "), strings.Join(event.Names(), ", "))
		}
		slices.Sort(events)
	}
	if in.Secret != nil {
		checkSecret(c, *in.Secret)
	}
	if in.Status != nil {
		c.Enum("status", *in.Status, []string{StatusActive, StatusDisabled}, true)
	}
	return events
}

// checkURL requires an absolute https URL; http only to a loopback host in
// dev mode.
func (s *Service) checkURL(c *ocpi.Check, field, raw string) {
	c.String(field, raw, 2048, true)
	if c.Failed() {
		return
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		c.Fail(field, "must be an absolute https URL")
		return
	}
	switch u.Scheme {
	case "https":
	case "http":
		if !s.cfg.DevMode || !isLoopback(u.Hostname()) {
			c.Fail(field, "must be an https URL (http is accepted only for loopback hosts in dev mode)")
		}
	default:
		c.Fail(field, "must be an https URL, not %s", u.Scheme)
	}
	if u.Fragment != "" {
		c.Fail(field, "must not have a fragment")
	}
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSecret requires 16 to 255 printable ASCII characters without spaces;
// a "whsec_" secret must be base64 of at least 16 bytes.
func checkSecret(c *ocpi.Check, secret string) {
	if len(secret) < 16 || len(secret) > 255 {
		c.Fail("secret", "must have 16 to 255 characters (omit it and one is generated)")
		return
	}
	for i := 0; i < len(secret); i++ {
		if secret[i] <= ' ' || secret[i] > '~' {
			c.Fail("secret", "must be printable ASCII without spaces")
			return
		}
	}
	if rest, ok := strings.CutPrefix(secret, secretPrefix); ok {
		key, err := base64.StdEncoding.DecodeString(rest)
		if err != nil || len(key) < 16 {
			c.Fail("secret", "a %s secret must be the base64 of at least 16 bytes", secretPrefix)
		}
	}
}

// setEvents replaces the event list of a subscription.
func setEvents(ctx context.Context, tx *store.Tx, id string, events []string) error {
	if _, err := tx.Exec(ctx, "DELETE FROM webhook_subscription_events WHERE subscription_id = $1", id); err != nil {
		return err
	}
	for _, name := range events {
		if _, err := tx.Exec(ctx, "INSERT INTO webhook_subscription_events (subscription_id, event) VALUES ($1, $2)", id, name); err != nil {
			return err
		}
	}
	return nil
}

// enable turns a disabled subscription on again with a clean slate.
func enable(ctx context.Context, tx *store.Tx, id string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE webhook_subscriptions SET status = $1, disabled_reason = '', failures = 0, failing_since = 0,
		updated_at = $2 WHERE id = $3`, StatusActive, now.UnixMicro(), id)
	return err
}
