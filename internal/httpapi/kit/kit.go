// Package kit is the transport kit of the hub's handlers: the answers
// (OCPI envelopes, pages, stored objects), body decoding, the request's ids
// and the public URLs. httpapi and the module packages under it answer
// through the same kit, so every module writes the same envelopes.
package kit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// Kit holds what answers need: the clock of their timestamps, the logger
// and the public URL partners reach the hub at.
type Kit struct {
	Clock  clock.Clock
	Logger *slog.Logger
	// Hub routes requests addressed to other parties (nil: a hub without
	// peers or routing, in tests).
	Hub *hub.Hub
	// Base is the public URL partners reach the hub at; it prefixes every
	// URL advertised (versions, endpoints, Link headers).
	Base *url.URL
}

// PublicURL returns the absolute URL of path as partners see it.
func (k *Kit) PublicURL(path string) string {
	u := *k.Base
	u.Path = singleSlash(u.Path + path)
	return u.String()
}

// SelfURL returns the absolute URL of the request being served, for Link
// headers.
func (k *Kit) SelfURL(r *http.Request) *url.URL {
	u := *k.Base
	u.Path = singleSlash(u.Path + r.URL.Path)
	u.RawQuery = r.URL.RawQuery
	return &u
}

func singleSlash(p string) string {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '/' && p[i+1] == '/' {
			p = p[:i] + p[i+1:]
			i--
		}
	}
	return p
}

// Page writes a paged list: the headers of transport.md §6 and the objects.
func (k *Kit) Page(w http.ResponseWriter, r *http.Request, req ocpi.PageRequest, items any, count int, page ocpi.Page) error {
	ocpi.SetPageHeaders(w.Header(), k.SelfURL(r), req, page, ocpi.MaxLimit, count)
	return k.OK(w, items)
}

// ServePage serves one page of a list: the page the request's query asks
// for, of what list gives, written by write.
func ServePage[T any](r *http.Request, list func(ocpi.PageRequest) ([]T, ocpi.Page, error), write func(ocpi.PageRequest, []T, ocpi.Page) error) error {
	req, err := ocpi.ParsePageRequest(r.URL.Query(), ocpi.MaxLimit)
	if err != nil {
		return err
	}
	items, page, err := list(req)
	if err != nil {
		return err
	}
	return write(req, items, page)
}

// ListPage answers a paged list: the page the request's query asks for, of
// what list gives.
func ListPage[T any](k *Kit, w http.ResponseWriter, r *http.Request, list func(ocpi.PageRequest) ([]T, ocpi.Page, error)) error {
	return ServePage(r, list, func(req ocpi.PageRequest, items []T, page ocpi.Page) error {
		return k.Page(w, r, req, items, len(items), page)
	})
}

// ListPageRaw is ListPage for stored documents, written as they are
// (PageRaw).
func (k *Kit) ListPageRaw(w http.ResponseWriter, r *http.Request, list func(ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error)) error {
	return ServePage(r, list, func(req ocpi.PageRequest, items []json.RawMessage, page ocpi.Page) error {
		return k.PageRaw(w, r, req, items, page)
	})
}

// SenderPage answers a sender's GET ALL the hub serves itself: ListPage,
// marked as the hub's answer.
func SenderPage[T any](k *Kit, w http.ResponseWriter, r *http.Request, list func(ocpi.PageRequest) ([]T, ocpi.Page, error)) error {
	return ServePage(r, list, func(req ocpi.PageRequest, items []T, page ocpi.Page) error {
		k.SetHubRouting(w, r)
		return k.Page(w, r, req, items, len(items), page)
	})
}

// DirectoryPage is SenderPage for the directory's stored documents, written
// as they are (PageRaw).
func (k *Kit) DirectoryPage(w http.ResponseWriter, r *http.Request, list func(ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error)) error {
	return ServePage(r, list, func(req ocpi.PageRequest, items []json.RawMessage, page ocpi.Page) error {
		k.SetHubRouting(w, r)
		return k.PageRaw(w, r, req, items, page)
	})
}

// ByPath answers a request for one thing named by the path segment name:
// what get returns for it, in a 1000 envelope.
func ByPath[T any](k *Kit, w http.ResponseWriter, r *http.Request, name string, get func(context.Context, string) (T, error)) error {
	v, err := get(r.Context(), r.PathValue(name))
	if err != nil {
		return err
	}
	return k.OK(w, v)
}

// ActOn answers a request about one thing named by the path segment name
// that carries a body: act gets the thing's name and the decoded body, and
// answer writes what act returns.
func ActOn[In, Out any](w http.ResponseWriter, r *http.Request, name string, act func(context.Context, string, In) (Out, error),
	answer func(http.ResponseWriter, any) error) error {
	var in In
	if err := Decode(r, &in); err != nil {
		return err
	}
	out, err := act(r.Context(), r.PathValue(name), in)
	if err != nil {
		return err
	}
	return answer(w, out)
}

// PathID reads the {id} path segment: a positive integer.
func PathID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, ocpi.Invalid("id", "must be a positive integer")
	}
	return id, nil
}

type ctxKey int

const (
	requestIDKey ctxKey = iota
	correlationIDKey
)

// WithIDs returns ctx carrying the request's X-Request-ID and
// X-Correlation-ID.
func WithIDs(ctx context.Context, requestID, correlationID string) context.Context {
	ctx = context.WithValue(ctx, requestIDKey, requestID)
	return context.WithValue(ctx, correlationIDKey, correlationID)
}

// RequestID returns the X-Request-ID of the request being served.
func RequestID(ctx context.Context) string { s, _ := ctx.Value(requestIDKey).(string); return s }

// CorrelationID returns the X-Correlation-ID of the request being served; a
// hub forwarding the request keeps it.
func CorrelationID(ctx context.Context) string {
	s, _ := ctx.Value(correlationIDKey).(string)
	return s
}

// WithCorrelationID returns ctx carrying a correlation id, for work that
// continues a request outside it (jobs).
func WithCorrelationID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, correlationIDKey, id)
}

// WriteJSON writes v as JSON with the given HTTP status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	b := []byte(`{"status_code":3000,"status_message":"response could not be encoded"}`)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
	} else {
		b = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// OK writes a 1000 envelope around data with HTTP 200.
func (k *Kit) OK(w http.ResponseWriter, data any) error {
	WriteJSON(w, http.StatusOK, ocpi.Success(data, k.Clock.Now()))
	return nil
}

// Created writes a 1000 envelope with HTTP 201.
func (k *Kit) Created(w http.ResponseWriter, data any) error {
	WriteJSON(w, http.StatusCreated, ocpi.Success(data, k.Clock.Now()))
	return nil
}

// Stored answers a PUT/PATCH of a client-owned object: 201 when it is new,
// 200 when it replaced an existing one, without data (2.2.1-d2 erratum).
func (k *Kit) Stored(w http.ResponseWriter, isNew bool) error {
	if isNew {
		return k.Created(w, nil)
	}
	return k.OK(w, nil)
}

// Decode reads a JSON body into v. A body over the cap is ETOOLARGE; a body
// that is not JSON is EINVALIDJSON; JSON of the wrong shape is EINVALID naming
// the field. Unknown fields are accepted (OCPI 2.3.0 extensibility rule).
func Decode(r *http.Request, v any) error {
	raw, err := ReadBody(r)
	if err != nil {
		return err
	}
	return DecodeBytes(raw, v)
}

// RefAndBody reads what a write to one object needs: the object's address
// (readRef checks the URL's part) and then the body.
func RefAndBody[R any](r *http.Request, readRef func(*http.Request) (R, error)) (R, []byte, error) {
	ref, err := readRef(r)
	if err != nil {
		return ref, nil, err
	}
	raw, err := ReadBody(r)
	return ref, raw, err
}

// ReadBody reads the whole body under the size cap and checks its media type.
func ReadBody(r *http.Request) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
			return nil, &ocpi.Error{Code: ocpi.EUNSUPPORTEDMEDIUM, Message: "the body must be application/json, not " + ct}
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &ocpi.Error{Code: ocpi.ETOOLARGE, Message: fmt.Sprintf("the body is larger than %d bytes", tooLarge.Limit)}
		}
		return nil, &ocpi.Error{Code: ocpi.EINVALIDJSON, Message: "the body could not be read", Err: err}
	}
	return raw, nil
}

// DecodeBytes is Decode for a body already read.
func DecodeBytes(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return &ocpi.Error{Code: ocpi.EINVALIDJSON, Message: "the body is empty; a JSON object is required"}
	}
	if !json.Valid(raw) {
		return &ocpi.Error{Code: ocpi.EINVALIDJSON, Message: "the body is not valid JSON"}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError turns a decoding error of valid JSON into EINVALID naming the
// field.
func jsonError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return ocpi.Invalid(field, "must be "+jsonKind(typeErr.Type.Kind().String())+", not a JSON "+typeErr.Value)
	}
	// Errors from our own UnmarshalJSON methods (DateTime, Number) do not say
	// where they happened; json wraps them without the path.
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "json: ")
	return &ocpi.Error{Code: ocpi.EINVALID, Message: msg, Field: "body", Issue: msg}
}

func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "a list"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	}
	return "of type " + k
}

// LogAttrs is a helper for handlers that log with the request's ids.
func LogAttrs(r *http.Request) []any {
	return []any{slog.String("request_id", RequestID(r.Context())), slog.String("correlation_id", CorrelationID(r.Context()))}
}

// pageBufs are the buffers pages are written from: a directory page is
// about 120 KB, allocated (and zeroed) for each page before, and Write
// keeps none of it. A buffer that grew past maxPooledPage is let go.
var pageBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledPage = 1 << 20

// PageRaw writes a paged list of stored JSON documents. The documents come
// from our own database as valid JSON, so the envelope is written around
// them as they are instead of re-encoding (and re-validating) each one: the
// directory's pages are large and hot.
func (k *Kit) PageRaw(w http.ResponseWriter, r *http.Request, req ocpi.PageRequest, items []json.RawMessage, page ocpi.Page) error {
	ocpi.SetPageHeaders(w.Header(), k.SelfURL(r), req, page, ocpi.MaxLimit, len(items))
	n := 128
	for _, it := range items {
		n += len(it) + 1
	}
	bp := pageBufs.Get().(*[]byte)
	b := slices.Grow((*bp)[:0], n)
	defer func() {
		if cap(b) <= maxPooledPage {
			*bp = b
			pageBufs.Put(bp)
		}
	}()
	b = append(b, `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"status_code":1000,"status_message":"Success","timestamp":"`...)
	b = append(b, ocpi.NewDateTime(k.Clock.Now()).String()...)
	b = append(b, `"}`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}
