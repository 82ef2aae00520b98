// Package logsink is the log sink of tests: a buffer that a hub's
// goroutines (or a subprocess's output copiers) write to while the test
// reads it. It imports nothing of ocpihub, so the internal tests of the
// packages hubtest itself imports can use it too.
package logsink

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer collects log lines; it is safe for concurrent writers and
// readers. The zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Logger returns a text logger at info level writing to b.
func (b *Buffer) Logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
