package simwire_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// TestSignalWait: Wait returns once its condition holds after Notify, and
// with the context's error when the context ends first.
func TestSignalWait(t *testing.T) {
	t.Parallel()
	var (
		s  simwire.Signal
		mu sync.Mutex
		n  int
	)
	go func() {
		for range 3 {
			mu.Lock()
			n++
			mu.Unlock()
			s.Notify()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Wait(ctx, func() bool { mu.Lock(); defer mu.Unlock(); return n == 3 }); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	if err := s.Wait(done, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on an ended context: %v, want context.Canceled", err)
	}
}
