package demo

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Timeline prints what happens, each line stamped with the time since the
// demo started. It is safe for concurrent use.
type Timeline struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

// newTimeline starts a timeline; its offsets are elapsed wall time.
func newTimeline(w io.Writer) *Timeline { return &Timeline{w: w, start: time.Now()} }

func (t *Timeline) line(mark, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	el := time.Since(t.start).Seconds()
	fmt.Fprintf(t.w, "%7.2fs  %s %s\n", el, mark, fmt.Sprintf(format, args...))
}

// Printf writes text as it is.
func (t *Timeline) Printf(format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, format, args...)
}

// Event records something that started (a server, a partner), under a tag.
func (t *Timeline) Event(tag, format string, args ...any) {
	t.line(fmt.Sprintf("%-5s", tag), format, args...)
}

// Section opens a story.
func (t *Timeline) Section(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(t.w, "\n── %s %s\n", name, strings.Repeat("─", max(3, 60-len([]rune(name)))))
}

// Step records a step of a story that happened as it should.
func (t *Timeline) Step(format string, args ...any) { t.line("  ·", format, args...) }

// Link shows where to look at something in the console.
func (t *Timeline) Link(what, url string) { t.line("  →", "%s: %s", what, url) }

// Done closes a story that succeeded.
func (t *Timeline) Done(format string, args ...any) { t.line("✓", format, args...) }

// Fail closes a story that failed.
func (t *Timeline) Fail(format string, args ...any) { t.line("✗", format, args...) }

// Skip closes a story that did not run.
func (t *Timeline) Skip(format string, args ...any) { t.line("–", format, args...) }
