package browsertest_test

import (
	"bytes"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/ocpihub/ocpihub/internal/browsertest"
)

// TestBrowserRendersAndRunsScript loads a page whose text is written by a
// script after a click, so a passing test proves the browser ran the page.
func TestBrowserRendersAndRunsScript(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><title>probe</title><body style="background:#fff">
<button id="go" onclick="document.getElementById('out').textContent='clicked ' + (6*7)">go</button>
<p id="out">waiting</p></body>`))
	}))
	t.Cleanup(srv.Close)

	b := browsertest.New(t)
	b.Run(chromedp.Navigate(srv.URL), chromedp.Click(chromedp.CSS("#go")))
	if got := b.Text("#out"); !strings.Contains(got, "clicked 42") {
		t.Fatalf("text after click = %q, want it to contain %q", got, "clicked 42")
	}
	shot := b.Screenshot("browsertest-probe")
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if img.Bounds().Dx() < 100 || img.Bounds().Dy() < 100 {
		t.Fatalf("screenshot is %v", img.Bounds())
	}
}
