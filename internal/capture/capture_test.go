package capture_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/capture"
)

func TestWriter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		keep      int
		header    []int // WriteHeader calls before the body
		chunks    []string
		status    int
		wrote     bool
		body      string
		truncated bool
	}{
		{name: "nothing written", keep: 10, status: 200},
		{name: "implicit 200", keep: 10, chunks: []string{"ab", "cd"}, status: 200, wrote: true, body: "abcd"},
		{name: "first header wins", keep: 10, header: []int{201, 500}, chunks: []string{"x"}, status: 201, wrote: true, body: "x"},
		{name: "header alone", keep: 10, header: []int{204}, status: 204, wrote: true},
		{name: "cut in a chunk", keep: 3, chunks: []string{"ab", "cd", "e"}, status: 200, wrote: true, body: "abc", truncated: true},
		{name: "exactly full", keep: 4, chunks: []string{"ab", "cd"}, status: 200, wrote: true, body: "abcd"},
		{name: "keeps none", chunks: []string{"ab"}, status: 200, wrote: true, truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rr := httptest.NewRecorder()
			var teed string
			w := &capture.Writer{ResponseWriter: rr, Keep: tt.keep, Tee: func(b []byte) { teed += string(b) }}
			for _, code := range tt.header {
				w.WriteHeader(code)
			}
			var all string
			for _, c := range tt.chunks {
				if _, err := w.Write([]byte(c)); err != nil {
					t.Fatal(err)
				}
				all += c
			}
			type result struct {
				Status, Written  int
				Wrote, Truncated bool
				Body, Teed, Sent string
			}
			want := result{tt.status, len(all), tt.wrote, tt.truncated, tt.body, all, all}
			got := result{w.Status(), w.Written(), w.Wrote(), w.Truncated(), string(w.Body()), teed, rr.Body.String()}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(tt.header) > 0 && rr.Code != tt.header[0] {
				t.Errorf("client got status %d, want %d", rr.Code, tt.header[0])
			}
		})
	}
}

// unwrapper hides its writer's Flush behind Unwrap, as a middleware's
// writer without a Flush of its own does.
type unwrapper struct{ http.ResponseWriter }

func (u unwrapper) Unwrap() http.ResponseWriter { return u.ResponseWriter }

func TestWriterFlushAndUnwrap(t *testing.T) {
	t.Parallel()
	rr := httptest.NewRecorder()
	w := &capture.Writer{ResponseWriter: unwrapper{rr}}
	var _ http.Flusher = w
	w.Flush()
	if !rr.Flushed {
		t.Error("Flush did not reach the writer behind Unwrap")
	}
	if err := http.NewResponseController(w).Flush(); err != nil {
		t.Errorf("ResponseController.Flush: %v", err)
	}
	if got := w.Unwrap(); got != (unwrapper{rr}) {
		t.Errorf("Unwrap = %v", got)
	}
	(&capture.Writer{ResponseWriter: struct{ http.ResponseWriter }{rr}}).Flush() // no flusher: nothing, no panic
}
