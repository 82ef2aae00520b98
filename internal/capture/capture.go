// Package capture passes an HTTP response through to the client and
// remembers what the middleware around a handler needs of it: the status,
// the bytes written, the start of the body. It imports nothing of the hub,
// so every layer that wraps handlers (tracing, httpapi, the test fixtures)
// shares one writer.
package capture

import (
	"bytes"
	"net/http"
)

// Writer wraps a ResponseWriter. Status is the first WriteHeader's code, or
// 200 at the first Write without one; Body keeps the first Keep bytes of the
// body; Tee, when set, sees every chunk of the body before it is passed on.
// Flush and Unwrap let streams and http.ResponseController reach the
// writer it wraps.
type Writer struct {
	http.ResponseWriter
	// Keep is how many bytes of the body, from its start, Body keeps.
	Keep int
	// Tee is given each chunk of the body as it is written.
	Tee func([]byte)
	// Buf, when set, is where the kept body is written (a buffer the caller
	// reuses, such as one from a pool); when nil the Writer keeps its own.
	Buf *bytes.Buffer

	status  int
	written int
	body    bytes.Buffer
	cut     bool
}

// kept is the buffer the body is kept in.
func (w *Writer) kept() *bytes.Buffer {
	if w.Buf != nil {
		return w.Buf
	}
	return &w.body
}

// WriteHeader remembers the first code and passes it on.
func (w *Writer) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write keeps what fits of b and passes it on.
func (w *Writer) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	kept := w.kept()
	if room := w.Keep - kept.Len(); room < len(b) {
		w.cut = true
		if room > 0 {
			kept.Write(b[:room])
		}
	} else {
		kept.Write(b)
	}
	if w.Tee != nil {
		w.Tee(b)
	}
	n, err := w.ResponseWriter.Write(b)
	w.written += n
	return n, err
}

// Flush passes a flush on (server-sent streams), through any writers the
// wrapped one wraps; it does nothing where none of them can flush.
func (w *Writer) Flush() {
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the wrapped writer.
func (w *Writer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Wrote reports whether the handler wrote a header or any of the body.
func (w *Writer) Wrote() bool { return w.status != 0 }

// Status is the status the client was sent: 200 when the handler wrote
// nothing, as net/http then answers.
func (w *Writer) Status() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}

// Written is how many bytes of the body the wrapped writer took.
func (w *Writer) Written() int { return w.written }

// Body is the start of the body, at most Keep bytes.
func (w *Writer) Body() []byte { return w.kept().Bytes() }

// Truncated reports whether the body was longer than Keep.
func (w *Writer) Truncated() bool { return w.cut }
