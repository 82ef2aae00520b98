package demo

import (
	"bytes"
	"strings"
	"testing"
)

// TestSummaryWithoutKeepRunning: a demo that stops after its stories prints
// no console link (it would lead nowhere) and says how to look instead
// (observation 8: the demo printed a console link and exited).
func TestSummaryWithoutKeepRunning(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	failed := summary(newTimeline(&out), nil, []Result{{Story: "a story", OK: true}}, false)
	if failed != 0 {
		t.Errorf("%d failed, want 0", failed)
	}
	text := out.String()
	if strings.Contains(text, "/console") || strings.Contains(text, "login") {
		t.Errorf("a stopping demo printed a console link:\n%s", text)
	}
	if !strings.Contains(text, "ocpihub demo --keep-running") {
		t.Errorf("the summary does not say how to look at the console:\n%s", text)
	}
}
