// Package browsertest drives a headless Chromium for tests of the pages
// ocpihub serves to people: the QR landing page, receipts and the operator
// console. It speaks the DevTools protocol through chromedp, so nothing but the
// browser binary is needed (Debian's chromium package; .ci/run installs it).
//
// Without a browser the tests that need one are skipped with a visible
// message, unless OCPIHUB_TEST_REQUIRE_BROWSER=1 (CI), where they fail.
// Screenshots go to OCPIHUB_SCREENSHOTS when it names a directory, and to the
// test's temporary directory otherwise.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// candidates are the browser binaries looked for, in order.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"}

// Path returns the browser binary: OCPIHUB_TEST_CHROMIUM, or the first
// candidate on PATH, or "".
func Path() string {
	if p := os.Getenv("OCPIHUB_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// Browser is a headless browser tab for one test.
type Browser struct {
	ctx context.Context
	t   testing.TB
}

// New starts a headless browser for the test (closed at its end) or skips
// the test when there is none, as the package doc says.
func New(t testing.TB) *Browser {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("OCPIHUB_TEST_REQUIRE_BROWSER") == "1" {
			t.Fatal("a headless browser is required (OCPIHUB_TEST_REQUIRE_BROWSER=1) but none was found; install Debian's chromium package")
		}
		t.Skip("SKIPPED: no chromium on PATH; install Debian's chromium package to run the browser tests")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	// Start the browser now, so a broken installation fails here and not in
	// the middle of a test's first step.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return &Browser{ctx: ctx, t: t}
}

// Run performs steps in order with a deadline of 60 s and fails the test on
// error.
func (b *Browser) Run(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := b.Try(steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

// Try performs steps in order with a deadline of 60 s and returns the error.
func (b *Browser) Try(steps ...chromedp.Action[chromedp.Void]) error {
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	return chromedp.Do(ctx, steps...)
}

// Get runs one action that returns a value, with a deadline of 60 s, and
// fails the test on error.
func Get[T any](b *Browser, a chromedp.Action[T]) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		b.t.Fatalf("browser: %v", err)
	}
	return v
}

// Mobile makes the page render as on a phone (a narrow viewport with touch).
func (b *Browser) Mobile() {
	b.t.Helper()
	b.Run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile, chromedp.EmulateTouch))
}

// Screenshot captures the whole page as PNG, saves it as name.png in the
// screenshot directory and returns the bytes.
func (b *Browser) Screenshot(name string) []byte {
	b.t.Helper()
	png := Get(b, chromedp.FullScreenshot(100))
	dir := os.Getenv("OCPIHUB_SCREENSHOTS")
	if dir == "" {
		dir = b.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	safe := strings.NewReplacer("/", "_", " ", "_").Replace(name)
	if err := os.WriteFile(filepath.Join(dir, safe+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	return png
}

// Text returns the visible text of the element matching the CSS selector
// sel, waiting for it to be visible.
func (b *Browser) Text(sel string) string {
	b.t.Helper()
	return Get(b, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
}

// WaitText polls the visible text of the element matching sel until it
// contains want, for at most 30 s, and returns the last text read. After a
// click that navigates, the page before may still match sel (a flash message
// of the previous action), so waiting for visibility alone is not enough.
func (b *Browser) WaitText(sel, want string) string {
	b.t.Helper()
	deadline := time.Now().Add(30 * time.Second) // elapsed wall time: how long to wait for the browser
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var text string
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
		cancel()
		if err == nil {
			text = v
			if strings.Contains(text, want) {
				return text
			}
		}
		if time.Now().After(deadline) {
			return text
		}
		<-tick.C
	}
}

// Context returns the browser context for chromedp calls the helpers lack.
func (b *Browser) Context() context.Context { return b.ctx }

// Click clicks the element sel matches. A live page (main[data-refresh])
// replaces its content every few seconds; when that happens between finding
// the element and clicking it, the browser answers that the node is gone,
// and the click is made again on the element that replaced it.
func Click(sel string) chromedp.Action[chromedp.Void] {
	click := chromedp.Click(chromedp.CSS(sel))
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		for attempt := 1; ; attempt++ {
			v, err := click(ctx, t)
			if err == nil || attempt == 3 || !nodeGone(err) {
				return v, err
			}
		}
	}
}

// nodeGone reports the DevTools errors of an element replaced after it was
// found.
func nodeGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "No node with given id found") || strings.Contains(s, "Could not find node with given id") ||
		strings.Contains(s, "Node is detached from document")
}
