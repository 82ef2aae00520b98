package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// queued waits until the gate holds n waiters.
func queued(t *testing.T, g *writeGate, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		k := len(g.fg) + len(g.bg)
		g.mu.Unlock()
		if k == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters queued, want %d", k, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestWriteGateOrder: on SQLite the gate admits one transaction at a time,
// in arrival order within a class, requests ahead of background work, and
// one background turn after every foregroundShare request turns while both
// wait (so neither class starves the other).
func TestWriteGateOrder(t *testing.T) {
	t.Parallel()
	g := newWriteGate(SQLite, 1)
	ctx := context.Background()
	release, err := g.acquire(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 16)
	enqueue := func(name string, background bool) {
		go func() {
			rel, err := g.acquire(ctx, background)
			if err != nil {
				got <- "error " + err.Error()
				return
			}
			got <- name
			rel()
		}()
	}
	// b1 and b2 arrive first, then six requests.
	names := []string{"b1", "b2", "f1", "f2", "f3", "f4", "f5", "f6"}
	for i, n := range names {
		enqueue(n, n[0] == 'b')
		queued(t, g, i+1)
	}
	release()
	var order []string
	for range names {
		order = append(order, <-got)
	}
	want := "f1 f2 f3 f4 b1 f5 f6 b2"
	if s := strings.Join(order, " "); s != want {
		t.Errorf("grant order %s, want %s", s, want)
	}
}

// TestWriteGateCancel: a waiter whose context ends leaves the queue, and
// the turn passes to the next one.
func TestWriteGateCancel(t *testing.T) {
	t.Parallel()
	g := newWriteGate(SQLite, 1)
	release, _ := g.acquire(context.Background(), false)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.acquire(ctx, false)
		errc <- err
	}()
	queued(t, g, 1)
	next := make(chan struct{})
	go func() {
		rel, _ := g.acquire(context.Background(), true)
		close(next)
		rel()
	}()
	queued(t, g, 2)
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("a cancelled waiter got the turn")
	}
	release()
	select {
	case <-next:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn did not pass on")
	}
}

// TestWriteGateBackgroundCapOnPostgres: background transactions take at
// most half the pool; requests are never held.
func TestWriteGateBackgroundCapOnPostgres(t *testing.T) {
	t.Parallel()
	g := newWriteGate(Postgres, 6)
	ctx := context.Background()
	for i := range 3 {
		if _, err := g.acquire(ctx, true); err != nil {
			t.Fatal(fmt.Sprint(i, err))
		}
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := g.acquire(short, true); err == nil {
		t.Error("a fourth background transaction got a slot of a pool of 6")
	}
	if _, err := g.acquire(short, false); err != nil {
		t.Errorf("a request waited: %v", err)
	}
}
