package webhook

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// seedSubscriptions stores, as another process would, two platforms (a
// connected CPO NL/CP1 and a suspended eMSP DE/EM1) and subscriptions of
// the operator and of both, active and disabled.
func seedSubscriptions(t *testing.T, db *store.DB) {
	t.Helper()
	storetest.Exec(t, db,
		`INSERT INTO platforms (id, name, status, endpoints, created_at, updated_at) VALUES (1, 'CPO', 'CONNECTED', '[]', 1, 1), (2, 'EMSP', 'SUSPENDED', '[]', 1, 1)`,
		`INSERT INTO platform_roles (platform_id, role, country_code, party_id, business_details, updated_at) VALUES
			(1, 'CPO', 'NL', 'CP1', '{}', 1), (2, 'EMSP', 'DE', 'EM1', '{}', 1)`)
	for _, sub := range []struct {
		id       string
		platform int
		status   string
		events   []string
	}{
		{"op-both", 0, StatusActive, []string{event.LocationUpdated, event.CDRCreated}},
		{"op-off", 0, StatusDisabled, []string{event.LocationUpdated}},
		{"cpo-loc", 1, StatusActive, []string{event.LocationUpdated}},
		{"cpo-cdr", 1, StatusActive, []string{event.CDRCreated}},
		{"emsp-loc", 2, StatusActive, []string{event.LocationUpdated}},
	} {
		storetest.Exec(t, db, fmt.Sprintf(`INSERT INTO webhook_subscriptions (id, platform_id, url, secret, status, created_at, updated_at)
			VALUES ('%s', %d, 'https://example.com/h', 's', '%s', 1, 1)`, sub.id, sub.platform, sub.status),
			fmt.Sprintf(`INSERT INTO webhook_receivers (subscription_id) VALUES ('%s')`, sub.id))
		for _, e := range sub.events {
			storetest.Exec(t, db, fmt.Sprintf(`INSERT INTO webhook_subscription_events (subscription_id, event) VALUES ('%s', '%s')`, sub.id, e))
		}
	}
}

// stored returns what one emit stored: the event's name and data, and the
// subscriptions it is to be delivered to; then removes it.
func stored(t *testing.T, db *store.DB) string {
	t.Helper()
	ctx := context.Background()
	events := storetest.Column[string](t, ctx, db.Read(), "SELECT name || ' ' || data FROM webhook_events")
	subs := storetest.Column[string](t, ctx, db.Read(),
		"SELECT d.subscription_id || ' ' || d.event || ' ' || d.status || ' ' || d.event_id FROM webhook_deliveries d ORDER BY d.subscription_id")
	storetest.Exec(t, db, "DELETE FROM webhook_deliveries", "DELETE FROM webhook_events")
	for i, s := range subs { // the event's id differs from emit to emit
		if f := strings.Fields(s); len(f) == 4 {
			subs[i] = strings.Join(f[:3], " ")
		}
	}
	return fmt.Sprint(events, subs)
}

// TestUnseenEventsStoredAsLookedUp holds the one statement PostgreSQL
// stores an event with, when this process knows of no subscription naming
// it, to the lookup it replaces: for events of every name, visibility and
// party, the same event row (or none) and the same deliveries, through the
// operator's subscriptions, a connected partner's by party and by public
// events, a disabled subscription and a suspended partner's.
func TestUnseenEventsStoredAsLookedUp(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, store.Postgres)
	s := New(db, nil, nil, nil, Config{})
	seedSubscriptions(t, db)
	parties := [][]event.Party{nil,
		{{Role: "CPO", CountryCode: "NL", PartyID: "CP1"}},
		{{Role: "EMSP", CountryCode: "NL", PartyID: "CP1"}},
		{{CountryCode: "NL", PartyID: "CP1"}},
		{{Role: "EMSP", CountryCode: "DE", PartyID: "EM1"}},
		{{Role: "CPO", CountryCode: "XX", PartyID: "OTH"}, {CountryCode: "NL", PartyID: "CP1"}},
	}
	var none, some int
	for _, name := range []string{event.LocationUpdated, event.CDRCreated, event.SessionStarted} {
		for _, public := range []bool{false, true} {
			for i, ps := range parties {
				e := event.Event{Name: name, Public: public, Parties: ps, Data: map[string]any{"n": i}}
				emit := func(fn func(context.Context, *store.Tx, event.Event) error) string {
					if err := db.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error { return fn(ctx, tx, e) }); err != nil {
						t.Fatalf("%s public %v parties %v: %v", name, public, ps, err)
					}
					return stored(t, db)
				}
				want, got := emit(s.emitMatched), emit(s.emitUnseen)
				if got != want {
					t.Fatalf("%s public %v parties %v: stored %s, looked up %s", name, public, ps, got, want)
				}
				if strings.HasPrefix(want, "[]") {
					none++
				} else {
					some++
				}
			}
		}
	}
	if none < 6 || some < 18 {
		t.Fatalf("%d events with subscribers and %d without: the cases do not reach both", some, none)
	}
}

// TestSubscribedForgottenOnWrite: what this process knows of the events
// subscriptions name is read once a second (on the injected clock) outside
// any transaction, forgotten when a subscription is written here, and a
// read that began before that write is not kept.
func TestSubscribedForgottenOnWrite(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
		s := New(db, nil, clk, nil, Config{})
		ctx := context.Background()
		known := func() bool {
			t.Helper()
			if s.knownUnsubscribed(event.SessionStarted) {
				return true
			}
			s.waitLoaded(t)
			return s.knownUnsubscribed(event.SessionStarted)
		}
		if !known() {
			t.Fatal("with no subscription, session.started is not known as unsubscribed")
		}
		// A subscription another process writes is seen after the second.
		seedSubscriptions(t, db)
		storetest.Exec(t, db, `INSERT INTO webhook_subscription_events (subscription_id, event) VALUES ('op-both', 'session.started')`)
		if !s.knownUnsubscribed(event.SessionStarted) {
			t.Fatal("read again within the second")
		}
		clk.Add(subscribedTTL)
		if known() {
			t.Fatal("a second later, the other process's subscription is not seen")
		}
		// This process's write forgets at its commit; a read begun before
		// it is not kept.
		storetest.Exec(t, db, "DELETE FROM webhook_subscription_events WHERE event = 'session.started'")
		clk.Add(subscribedTTL)
		s.subscribed.mu.Lock()
		gen := s.subscribed.gen
		s.subscribed.mu.Unlock()
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { s.forgetSubscribed(tx); return nil }); err != nil {
			t.Fatal(err)
		}
		s.loadSubscribed(gen, clk.Now())
		if s.subscribed.names != nil {
			t.Fatal("a read begun before a subscription's write was kept")
		}
		if !known() {
			t.Fatal("read after the write, session.started is not known as unsubscribed")
		}
	})
}

// waitLoaded waits for the read of the names Emit started.
func (s *Service) waitLoaded(t *testing.T) {
	t.Helper()
	waitUntil(t, "the names read", func() bool {
		s.subscribed.mu.Lock()
		defer s.subscribed.mu.Unlock()
		return !s.subscribed.loading
	})
}

// waitUntil waits up to 10 s for cond, which another goroutine makes true.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not in 10 s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOtherReplicaForgetsSubscribedNames: a subscription written on one
// replica makes the others forget the events they know subscriptions name
// when it commits (PostgreSQL: store.Listen), so they look its events'
// subscribers up and wake them at once; on SQLite there is no other
// replica, and what another process writes is read when the second is up.
func TestOtherReplicaForgetsSubscribedNames(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		url := storetest.MigratedURL(t, engine)
		dbA, dbB := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
		clk := clock.NewFake(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
		a, b := New(dbA, nil, clk, nil, Config{}), New(dbB, nil, clk, nil, Config{})
		storetest.Listen(t, dbB)
		if !b.knownUnsubscribed(event.SessionStarted) {
			b.waitLoaded(t)
		}
		if !b.knownUnsubscribed(event.SessionStarted) {
			t.Fatal("with no subscription, session.started is not known as unsubscribed")
		}
		if err := dbA.InTx(context.Background(), func(ctx context.Context, tx *store.Tx) error {
			a.forgetSubscribed(tx)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		forgotten := func() bool {
			b.subscribed.mu.Lock()
			defer b.subscribed.mu.Unlock()
			return b.subscribed.names == nil
		}
		if engine == store.SQLite {
			if forgotten() {
				t.Fatal("forgotten on SQLite, where nothing is sent")
			}
			return
		}
		waitUntil(t, "the other replica to forget the names", forgotten)
	})
}
