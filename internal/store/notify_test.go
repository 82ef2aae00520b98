package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// heard counts the topics one process ran.
type heard struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *heard) on(db *store.DB, topics ...string) {
	for _, topic := range topics {
		db.OnNotify(topic, func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.n == nil {
				h.n = map[string]int{}
			}
			h.n[topic]++
		})
	}
}

func (h *heard) count(topic string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[topic]
}

// TestNotifyReachesTheOtherProcesses: two processes on one PostgreSQL
// database. What one's committed transaction sent runs the other's
// functions for its topic, not its own (it forgot at its commit); a rolled
// back one sends nothing; a listener that starts, or whose connection broke
// and connects again, runs every topic's functions, as it may have missed
// some. On SQLite nothing is sent and Listen returns at once.
func TestNotifyReachesTheOtherProcesses(t *testing.T) {
	t.Parallel()
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		url := storetest.MigratedURL(t, engine)
		a, b := storetest.OpenURL(t, url), storetest.OpenURL(t, url)
		var ha, hb heard
		ha.on(a, "parties", "other")
		hb.on(b, "parties", "other")
		storetest.Listen(t, a)
		storetest.Listen(t, b)
		// Starting to listen ran every topic once (on PostgreSQL).
		base := 0
		if engine == store.Postgres {
			base = 1
		}
		for _, h := range []*heard{&ha, &hb} {
			if h.count("parties") != base || h.count("other") != base {
				t.Fatalf("heard %v on starting to listen, want each topic %d times", h.n, base)
			}
		}
		ctx := context.Background()
		send := func(topic string, fail bool) {
			t.Helper()
			boom := errors.New("boom")
			err := a.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				tx.NotifyAtCommit(topic)
				if fail {
					return boom
				}
				return nil
			})
			if fail != errors.Is(err, boom) || !fail && err != nil {
				t.Fatalf("sending %s: %v", topic, err)
			}
		}
		waitHeard := func(h *heard, topic string, n int) {
			t.Helper()
			waitFor(t, func() bool { return h.count(topic) >= n })
		}
		send("parties", true)
		send("parties", false)
		send("other", false)
		if engine == store.SQLite {
			if ha.count("parties")+hb.count("parties")+hb.count("other") != 0 {
				t.Fatal("something was heard on SQLite")
			}
			return
		}
		// In commit order: once "other" is heard, "parties" was too, once.
		waitHeard(&hb, "other", 2)
		if n := hb.count("parties"); n != 2 {
			t.Fatalf("the other process heard parties %d times, want 2 (the rolled back one sends nothing)", n)
		}
		if n := ha.count("parties") + ha.count("other"); n != 2 {
			t.Fatalf("the sending process heard its own topics %d times, want only on starting to listen", n-2)
		}
		// Their listening connections broken, both processes listen again
		// and run every topic's functions.
		// Theirs alone: other tests' databases listen on the same channel
		// name (a database of its own, the public schema).
		if _, err := a.Read().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND query = 'LISTEN "' || $1 || '"'`, a.NotifyChannel()); err != nil {
			t.Fatal(err)
		}
		waitHeard(&hb, "other", 3)
		waitHeard(&hb, "parties", 3)
		waitHeard(&ha, "parties", 2)
		send("other", false)
		waitHeard(&hb, "other", 4)
	})
}
