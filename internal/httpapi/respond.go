package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// apiFunc is an OCPI handler: it writes a success response itself and
// returns an error for the caller to answer with an envelope.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

// writeJSON writes v as JSON with the given HTTP status.
func writeJSON(w http.ResponseWriter, status int, v any) {
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

// ok writes a 1000 envelope around data with HTTP 200.
func (s *Server) ok(w http.ResponseWriter, data any) error {
	writeJSON(w, http.StatusOK, ocpi.Success(data, s.clock.Now()))
	return nil
}

// created writes a 1000 envelope with HTTP 201.
func (s *Server) created(w http.ResponseWriter, data any) error {
	writeJSON(w, http.StatusCreated, ocpi.Success(data, s.clock.Now()))
	return nil
}

// stored answers a PUT/PATCH of a client-owned object: 201 when it is new,
// 200 when it replaced an existing one, without data (2.2.1-d2 erratum).
func (s *Server) stored(w http.ResponseWriter, isNew bool) error {
	if isNew {
		return s.created(w, nil)
	}
	return s.ok(w, nil)
}

// writeError answers err with its envelope and logs what the caller does not
// see.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	if st := ocpi.AsStale(err); st != nil {
		s.noteStale(r, st)
	}
	status, resp := ocpi.ErrorResponse(err, s.clock.Now())
	if legacyVersion(r.URL.Path) != "" {
		resp = legacyEnvelope(resp)
	}
	if status >= 500 {
		s.logger.ErrorContext(r.Context(), "request failed", "error", err, "method", r.Method, "path", r.URL.Path, "request_id", RequestID(r.Context()))
	} else if ocpi.ErrorCode(err) == ocpi.EINTERNAL {
		s.logger.ErrorContext(r.Context(), "request failed", "error", err)
	} else {
		s.logger.DebugContext(r.Context(), "request rejected", "error", err, "path", r.URL.Path)
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Token realm="ocpihub"`)
	}
	s.setErrorRouting(w, r)
	writeJSON(w, status, resp)
}

// decode reads a JSON body into v. A body over the cap is ETOOLARGE; a body
// that is not JSON is EINVALIDJSON; JSON of the wrong shape is EINVALID naming
// the field. Unknown fields are accepted (OCPI 2.3.0 extensibility rule).
func decode(r *http.Request, v any) error {
	raw, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(raw, v)
}

// readBody reads the whole body under the size cap and checks its media type.
func readBody(r *http.Request) ([]byte, error) {
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

// decodeBytes is decode for a body already read.
func decodeBytes(raw []byte, v any) error {
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

// logAttrs is a helper for handlers that log with the request's ids.
func logAttrs(r *http.Request) []any {
	return []any{slog.String("request_id", RequestID(r.Context())), slog.String("correlation_id", CorrelationID(r.Context()))}
}

// pageRaw writes a paged list of stored JSON documents. The documents come
// from our own database as valid JSON, so the envelope is written around
// them as they are instead of re-encoding (and re-validating) each one: the
// directory's pages are large and hot.
func (s *Server) pageRaw(w http.ResponseWriter, r *http.Request, req ocpi.PageRequest, items []json.RawMessage, page ocpi.Page) error {
	ocpi.SetPageHeaders(w.Header(), s.selfURL(r), req, page, ocpi.MaxLimit, len(items))
	n := 128
	for _, it := range items {
		n += len(it) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"status_code":1000,"status_message":"Success","timestamp":"`...)
	b = append(b, ocpi.NewDateTime(s.clock.Now()).String()...)
	b = append(b, `"}`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(b)
	return err
}
