package jobs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
)

// TestShutdownFilter: River's reports of a cancelled context are dropped
// once Stop has begun, and only then; other errors always pass, and
// River's records below warning level stay filtered out.
func TestShutdownFilter(t *testing.T) {
	var buf bytes.Buffer
	stopping := &atomic.Bool{}
	base := slog.New(slog.NewTextHandler(&buf, nil))
	log := slog.New(shutdownFilter{quietRiver(base).Handler(), stopping}).With("component", "river")
	cancelled := fmt.Errorf("error starting transaction: %w", context.Canceled)

	log.Error("maintenance.PeriodicJobEnqueuer: Error inserting jobs", "error", cancelled)
	if !strings.Contains(buf.String(), "context canceled") {
		t.Fatalf("a cancelled context before Stop was dropped: %q", buf.String())
	}
	buf.Reset()
	stopping.Store(true)
	log.Error("maintenance.PeriodicJobEnqueuer: Error inserting jobs", "error", cancelled)
	log.WithGroup("g").Error("producer: context canceled while fetching")
	if buf.Len() != 0 {
		t.Fatalf("a cancelled context during Stop was logged: %q", buf.String())
	}
	log.Error("maintenance.PeriodicJobEnqueuer: Error inserting jobs", "error", errors.New("disk full"))
	if !strings.Contains(buf.String(), "disk full") {
		t.Fatalf("another error during Stop was dropped: %q", buf.String())
	}
	buf.Reset()
	log.Info("a notice", "error", cancelled)
	if buf.Len() != 0 {
		t.Fatalf("River's info records pass: %q", buf.String())
	}
}
