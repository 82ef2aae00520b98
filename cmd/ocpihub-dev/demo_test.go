package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/demo"
)

// syncBuffer is a buffer written by the demo and read by the test, which
// is told of every write.
type syncBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote chan struct{}
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case b.wrote <- struct{}{}:
	default:
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the output contains s.
func (b *syncBuffer) waitFor(t *testing.T, s string, d time.Duration) string {
	t.Helper()
	deadline := time.After(d)
	for {
		if out := b.String(); strings.Contains(out, s) {
			return out
		}
		select {
		case <-b.wrote:
		case <-deadline:
			t.Fatalf("the demo never printed %q:\n%s", s, b.String())
		}
	}
}

// TestDemo runs `ocpihub demo --keep-running` to the end of its stories:
// every story of the demo succeeded in its timeline with the outcomes it
// states, the driver's links work while it keeps running, the one-time
// console link signs in and the console shows the partners, and Ctrl-C (the
// context ending) stops it cleanly.
func TestDemo(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &syncBuffer{wrote: make(chan struct{}, 1)}
	var errOut bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- program.Run(ctx, []string{"demo", "--addr", "127.0.0.1:0", "--keep-running", "--dir", t.TempDir()}, out, &errOut, func(string) string { return "" })
	}()
	text := out.waitFor(t, "Ctrl-C stops it", 2*time.Minute)

	stories := demo.Stories()
	if !strings.Contains(text, "All "+strconv.Itoa(len(stories))+" stories succeeded.") {
		t.Errorf("the demo does not say every story succeeded:\n%s", text)
	}
	summary := text[strings.Index(text, "\nSummary\n"):]
	for _, s := range stories {
		if !regexp.MustCompile(`(?m)^  ✓ ` + regexp.QuoteMeta(s.Name) + ` +\d`).MatchString(summary) {
			t.Errorf("story %q did not succeed:\n%s", s.Name, summary)
		}
		if !strings.Contains(text, "── "+s.Name+" ") || !strings.Contains(text, "✓ "+s.Name+" (") {
			t.Errorf("story %q has no section in the timeline", s.Name)
		}
	}
	if strings.Contains(text, "✗") || strings.Contains(text, "skipped") {
		t.Errorf("the timeline reports a failure:\n%s", text)
	}

	// The stories' outcomes as the timeline states them.
	for _, want := range []string{
		"ALLOWED, reference RMI-AUTH-",
		"answers BLOCKED",
		"status_code 2004 (unknown token)",
		"the CDR costs ₹272.88 (12.5 kWh): the hub settles the payment against the ₹500.00 captured",
		"partial refund of the excess ₹227.12",
		`SMS (DLT sender OCPHUB, template 1107170000000000001) to the driver's +9198…10: "Paid ₹272.88 for 12.5 kWh of EV charging. Your receipt: http`,
		"receives it in OCPI 2.2.1: ₹272.88 incl. VAT (₹231.25 excl.), capture SUCCESS",
		"the receiver gets token.updated",
		"the receiver gets location.updated",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the timeline lacks %q", want)
		}
	}

	// While the demo keeps running, its links work: the driver's payment
	// page and the PDF receipt.
	for _, l := range []struct{ label, contentType string }{{"driver's payment page", "text/html"}, {"receipt (PDF)", "application/pdf"}} {
		m := regexp.MustCompile(regexp.QuoteMeta(l.label) + `: (http://\S+)`).FindStringSubmatch(text)
		if m == nil {
			t.Errorf("no %s link in the timeline", l.label)
			continue
		}
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), l.contentType) {
			t.Errorf("%s %s: HTTP %d %s", l.label, m[1], resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}

	// The one-time link signs in to a console that shows the partners.
	link := regexp.MustCompile(`one-time link \(valid 10 minutes\): (http://\S+)`).FindStringSubmatch(text)
	if link == nil {
		t.Fatalf("no console link in:\n%s", text)
	}
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := client.Get(link[1])
	if err != nil {
		t.Fatal(err)
	}
	var body bytes.Buffer
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(body.String(), "Connected platforms") {
		t.Fatalf("console link: HTTP %d at %s", resp.StatusCode, resp.Request.URL)
	}
	resp, err = client.Get(strings.Replace(link[1], "/login?code=", "/parties?x=", 1))
	if err != nil {
		t.Fatal(err)
	}
	body.Reset()
	body.ReadFrom(resp.Body)
	resp.Body.Close()
	for _, name := range []string{"Volt Yatra Charging", "Surya Chargers", "Chalo EV", "Roam India", "PayTerm India"} {
		if !strings.Contains(body.String(), name) {
			t.Errorf("the console's parties page lacks %s", name)
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("demo exit status %d: %s", code, errOut.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the demo did not stop when its context ended")
	}
}

// TestDemoCommandLine: help goes to stdout with exit 0; a mistake exits 2
// on stderr; the usage text lists the demo.
func TestDemoCommandLine(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	var out, errOut bytes.Buffer
	if code := program.Run(context.Background(), []string{"demo", "--help"}, &out, &errOut, env); code != 0 || !strings.Contains(out.String(), "Usage: ocpihub-dev demo") || errOut.Len() != 0 {
		t.Errorf("demo --help: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := program.Run(context.Background(), []string{"demo", "--nope"}, &out, &errOut, env); code != 2 || errOut.Len() == 0 || out.Len() != 0 {
		t.Errorf("demo --nope: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := program.Run(context.Background(), []string{"help"}, &out, &errOut, env); code != 0 || !strings.Contains(out.String(), "ocpihub-dev demo [--keep-running]") {
		t.Errorf("help: exit %d, %q", code, out.String())
	}
}
