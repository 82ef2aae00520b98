package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/store"
)

// subscribedTTL is how long this process trusts what it read of the events
// active subscriptions name.
const subscribedTTL = time.Second

// subscribed is what this process knows of the events that active
// subscriptions name, for Emit to choose its path on PostgreSQL. The choice
// never decides what is stored: an event no known subscription names is
// still stored, with its deliveries, by statements that find the
// subscriptions in the database in the same transaction (emitUnseen). It
// decides only whether the subscribers are looked up first, in a round trip
// inside the transaction of the event's cause, and woken when it commits,
// or found by the delivery engine's poll (a second), as another process's
// deliveries are. So a subscription written by another replica or by the
// CLI is never missed; its first delivery may wait for the poll until this
// process next reads the names.
//
// The names are read outside any transaction, by a goroutine Emit starts
// when what it knows is older than subscribedTTL; a subscription this
// process creates or changes forgets them once its transaction commits
// (and, on PostgreSQL, the other replicas once they hear of it:
// store.Listen), and a read that began before that is not kept (gen), so
// this process wakes its own new subscriptions at once, as it did before.
type subscribed struct {
	mu      sync.Mutex
	names   map[string]bool // nil: not known
	at      time.Time
	gen     uint64
	loading bool
}

// knownUnsubscribed reports whether name is known to be named by no active
// subscription, as read less than subscribedTTL ago; when what it knows is
// older, it starts a read of the names, unless one is under way.
func (s *Service) knownUnsubscribed(name string) bool {
	now := s.now()
	sb := &s.subscribed
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.names != nil && now.Sub(sb.at) < subscribedTTL {
		return !sb.names[name]
	}
	if !sb.loading {
		sb.loading = true
		go s.loadSubscribed(sb.gen, now)
	}
	return false
}

// loadSubscribed reads the events active subscriptions name and keeps them
// unless a subscription was written since gen.
func (s *Service) loadSubscribed(gen uint64, at time.Time) {
	ctx, cancel := context.WithTimeout(store.Background(context.Background()), 10*time.Second)
	defer cancel()
	list, err := store.QueryAll(ctx, s.db.Read(), func(r store.Row) (name string, err error) { return name, r.Scan(&name) },
		`SELECT DISTINCT e.event FROM webhook_subscription_events e
		JOIN webhook_subscriptions s ON s.id = e.subscription_id WHERE s.status = $1`, StatusActive)
	names := make(map[string]bool, len(list))
	for _, name := range list {
		names[name] = true
	}
	if err != nil {
		s.logger.Warn("could not read the events webhook subscriptions name", "error", err)
	}
	sb := &s.subscribed
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.loading = false
	if err == nil && sb.gen == gen {
		sb.names, sb.at = names, at
	}
}

// notifySubscriptions is the topic of a change to a subscription
// (store.OnNotify).
const notifySubscriptions = "webhook_subscriptions"

// forgetSubscribed makes Emit look subscribers up again once tx commits (a
// subscription was created, or its events or status changed): here, and on
// the other replicas when they hear of it (PostgreSQL).
func (s *Service) forgetSubscribed(tx *store.Tx) {
	tx.AfterCommit(s.forgetNames)
	tx.NotifyAtCommit(notifySubscriptions)
}

// forgetNames drops what this process knows of the events subscriptions
// name; a read under way is not kept.
func (s *Service) forgetNames() {
	sb := &s.subscribed
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.gen++
	sb.names = nil
}
