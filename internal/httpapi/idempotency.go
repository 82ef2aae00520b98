package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/capture"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/idempotency"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// replayedHeaders are the response headers stored with an answer and sent
// again on a replay. Ids, rate-limit and date headers are always fresh.
func replayedHeaders() []string {
	return []string{"Content-Type", "Location", "Link", "X-Total-Count", "X-Limit", "Allow", "Warning"}
}

// maxStoredAnswer is the largest answer stored for replays; a larger one is
// not kept (the request may then run again).
const maxStoredAnswer = 1 << 20

// inFlightWait is how long a repeated X-Request-ID waits for the first
// request's answer before it gets 409.
const inFlightWait = 30 * time.Second

// serveIdempotent runs fn, unless the write request repeats a key already
// answered for the same caller:
//
//   - a POST, PUT or PATCH repeating an earlier request of the caller (24 h)
//     identically (same X-Request-ID, method, path, query and body) gets the
//     stored answer and has no second effect (one arriving while the first
//     still runs waits for its answer). X-Request-ID is for tracing: the
//     same id on a different request is simply a new request (partners
//     reuse ids). Routes of the registration handshake (their answers hold
//     credentials tokens) and routes marked route.WithoutReplay are excluded.
//   - routes marked route.WithIdempotencyKey also take Idempotency-Key, which
//     wins over X-Request-ID: 409 while the first request runs, 422 on a
//     different request, the stored answer otherwise.
//
// The claim commits with the request's effect (idempotency.Store.Track);
// server errors (5xx) are not stored unless part of the effect committed:
// the request may be retried.
func (s *Server) serveIdempotent(w http.ResponseWriter, r *http.Request, a route.Access, rt route.Options, fn route.Func) error {
	st := s.cfg.Idempotency
	if st == nil || a == route.Public || (r.Method != http.MethodPost && r.Method != http.MethodPut && r.Method != http.MethodPatch) {
		return fn(w, r)
	}
	ctx := r.Context()
	c := party.CallerFrom(ctx)
	var kind, key, header string
	if rt.IdempotencyKey {
		if v := r.Header.Get("Idempotency-Key"); v != "" {
			k, err := parseIdempotencyKey(v)
			if err != nil {
				return err
			}
			kind, key, header = idempotency.KindKey, k, "Idempotency-Key"
		}
	}
	if key == "" && a != route.Registering && !rt.NoReplay {
		// Only an id the client sent (withIDs generates one when missing or
		// unusable).
		if v := strings.TrimSpace(r.Header.Get("X-Request-ID")); v != "" && v == RequestID(ctx) {
			kind, key, header = idempotency.KindRequestID, v, "X-Request-ID"
		}
	}
	if key == "" || c == nil {
		return fn(w, r)
	}
	body, err := readRaw(r)
	if err != nil {
		return err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	req := idempotency.Request{Caller: callerKey(c), Kind: kind, Key: key, Fingerprint: idempotency.Fingerprint(r.Method, r.URL.Path, r.URL.RawQuery, body)}
	if kind == idempotency.KindRequestID {
		req.Key = idempotency.RequestIDKey(key, req.Fingerprint)
	}
	claim, err := st.Begin(ctx, req)
	if err != nil {
		return err
	}
	if claim.State == idempotency.InFlight && kind == idempotency.KindRequestID {
		// An OCPI client retrying after its own timeout, while the first
		// attempt still runs: wait for that answer and give it (OCPI has
		// no "409, come back later").
		wctx, cancel := context.WithTimeout(ctx, inFlightWait)
		err := st.Wait(wctx, req)
		cancel()
		if err == nil {
			if claim, err = st.Begin(ctx, req); err != nil {
				return err
			}
		}
	}
	switch claim.State {
	case idempotency.Replay:
		h := w.Header()
		for k, vs := range claim.Response.Header {
			h[k] = vs
		}
		h.Set("Idempotent-Replayed", "true")
		h.Set("Content-Length", strconv.Itoa(len(claim.Response.Body)))
		w.WriteHeader(claim.Response.Status)
		_, _ = w.Write(claim.Response.Body)
		return nil
	case idempotency.Applied:
		// The first attempt's effect committed; its answer was lost with
		// the process that ran it. Running it again could do it twice, and
		// there is no answer to replay: a conflict that says so.
		return &ocpi.Error{Code: ocpi.ECONFLICT, Message: "this request was already processed; its original answer was lost in a restart: do not send it again"}
	case idempotency.InFlight:
		w.Header().Set("Retry-After", "1")
		return &ocpi.Error{Code: ocpi.ECONFLICT, Message: "a request with this " + header + " is still being processed; retry in a moment"}
	case idempotency.Mismatch:
		if kind == idempotency.KindKey {
			return &ocpi.Error{Code: ocpi.EUNPROCESSABLE, Field: header, Issue: "was used for a different request",
				Message: "this Idempotency-Key was already used for a different request (method, path or body); use a new key for a new request"}
		}
		return &ocpi.Error{Code: ocpi.EINVALID, Field: header, Issue: "was used for a different request in the last 24 hours",
			Message: "this X-Request-ID was already used for a different request (method, path or body) in the last 24 hours; send a fresh X-Request-ID with every new request"}
	}
	rec := &capture.Writer{ResponseWriter: w, Keep: maxStoredAnswer}
	if err := fn(rec, r.WithContext(st.Track(ctx, claim))); err != nil {
		s.writeError(rec, r, err)
	}
	status := rec.Status()
	stored := http.Header{}
	for _, k := range replayedHeaders() {
		if vs := rec.Header().Values(k); len(vs) > 0 {
			stored[k] = vs
		}
	}
	answer := idempotency.Response{Status: status, Header: stored, Body: rec.Body()}
	if status >= 500 || rec.Truncated() {
		err = st.Abandon(ctx, claim, answer)
	} else {
		err = st.Finish(ctx, claim, answer)
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "could not store the answer for idempotent replays", "error", err, "request_id", RequestID(ctx))
	}
	return nil
}

// parseIdempotencyKey reads the header's value: an sf-string (quoted, as
// the draft writes it) or a bare token, 1 to 255 printable characters.
func parseIdempotencyKey(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if v == "" || len(v) > 255 {
		return "", ocpi.Invalid("Idempotency-Key", "must have 1 to 255 characters")
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "", ocpi.Invalid("Idempotency-Key", "must be printable ASCII")
		}
	}
	return v, nil
}

// callerKey names the caller an idempotency key belongs to.
func callerKey(c *party.Caller) string {
	switch c.Kind {
	case party.CallerPlatform:
		return "platform:" + strconv.FormatInt(c.PlatformID, 10)
	case party.CallerRegistering:
		return "invitation:" + strconv.FormatInt(c.InvitationID, 10)
	}
	return "admin"
}

// readRaw reads the body under the size cap, whatever its media type (the
// handler checks that).
func readRaw(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &ocpi.Error{Code: ocpi.ETOOLARGE, Message: "the body is larger than " + strconv.FormatInt(tooLarge.Limit, 10) + " bytes"}
		}
		return nil, &ocpi.Error{Code: ocpi.EINVALIDJSON, Message: "the body could not be read", Err: err}
	}
	return raw, nil
}
