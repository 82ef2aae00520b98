package traffic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

const insertColumns = `at, direction, platform_id, partner, module, method, url, http_status, status_code, duration_us,
	request_id, correlation_id, from_party, to_party, object_ids, error, request_header, response_header, request_body, response_body, size`

// insertRows stores rows: COPY on PostgreSQL (several times cheaper for
// the server than INSERTs of the same rows), multi-row INSERTs on SQLite.
func insertRows(ctx context.Context, tx *store.Tx, rows []row) error {
	if tx.Engine() == store.Postgres {
		table := pgx.Identifier{"traffic"}
		if schema := tx.DB().Schema(); schema != "" {
			table = pgx.Identifier{schema, "traffic"}
		}
		ptx, err := tx.PgxTx(ctx)
		if err != nil {
			return err
		}
		_, err = ptx.CopyFrom(ctx, table, copyColumns, pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			return rows[i].values(), nil
		}))
		return err
	}
	const cols = 21
	const chunk = 200
	for len(rows) > 0 {
		n := min(len(rows), chunk)
		args := make([]any, 0, n*cols)
		for _, r := range rows[:n] {
			args = append(args, r.values()...)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO traffic ("+insertColumns+") VALUES "+store.Values(n, cols), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

var copyColumns = []string{"at", "direction", "platform_id", "partner", "module", "method", "url", "http_status", "status_code",
	"duration_us", "request_id", "correlation_id", "from_party", "to_party", "object_ids", "error", "request_header",
	"response_header", "request_body", "response_body", "size"}

// values are the row's columns in the order of insertColumns.
func (r row) values() []any {
	return []any{r.at, string(r.direction), r.platformID, r.partner, r.module, r.method, r.url, int32(r.httpStatus),
		int32(r.statusCode), r.durationUS, r.requestID, r.correlationID, r.fromParty, r.toParty, r.objectIDs, r.errText,
		r.requestHeader, r.respHeader, r.requestBody, r.respBody, r.size}
}

// Exchange is a recorded exchange. Bodies and headers are set by Find and
// by List with Filter.Bodies.
type Exchange struct {
	ID            int64     `json:"id"`
	At            time.Time `json:"at"`
	Direction     Direction `json:"direction"`
	PlatformID    int64     `json:"platform_id"`
	Partner       string    `json:"partner"`
	Module        string    `json:"module"`
	Method        string    `json:"method"`
	URL           string    `json:"url"`
	HTTPStatus    int       `json:"http_status"`
	StatusCode    int       `json:"status_code,omitempty"`
	DurationUS    int64     `json:"duration_us"`
	RequestID     string    `json:"request_id"`
	CorrelationID string    `json:"correlation_id"`
	FromParty     string    `json:"from_party,omitempty"`
	ToParty       string    `json:"to_party,omitempty"`
	ObjectIDs     []string  `json:"object_ids,omitempty"`
	Error         string    `json:"error,omitempty"`
	// RequestHeader, ResponseHeader, RequestBody and ResponseBody are the
	// redacted exchange.
	RequestHeader  http.Header `json:"request_header,omitempty"`
	ResponseHeader http.Header `json:"response_header,omitempty"`
	RequestBody    string      `json:"request_body,omitempty"`
	ResponseBody   string      `json:"response_body,omitempty"`
}

// Duration returns how long the exchange took.
func (e Exchange) Duration() time.Duration { return time.Duration(e.DurationUS) * time.Microsecond }

// Filter selects exchanges. Zero fields do not filter.
type Filter struct {
	// PlatformID, when not 0, keeps one partner's exchanges (the partner
	// endpoint always sets it).
	PlatformID int64
	// Partner matches the partner's name.
	Partner   string
	Module    string
	Direction Direction
	// StatusClass is an HTTP class ("2xx", "4xx", "5xx"), an OCPI class
	// ("1xxx", "2xxx", "3xxx", "4xxx") or "failed" (no answer).
	StatusClass   string
	CorrelationID string
	ObjectID      string
	From, To      time.Time
	// Before is the keyset cursor of a list newest first: only exchanges
	// with a smaller id. Oldest lists by start time instead (a chain's time
	// line), after the exchange whose id is After.
	Before, After int64
	Oldest        bool
	Limit         int
	// Bodies reads headers and bodies too (exports).
	Bodies bool
}

// MaxLimit caps one page.
const MaxLimit = 1000

// CheckStatusClass reports whether s is a status class Filter accepts.
func CheckStatusClass(s string) bool {
	switch s {
	case "", "1xx", "2xx", "3xx", "4xx", "5xx", "1xxx", "2xxx", "3xxx", "4xxx", "failed":
		return true
	}
	return false
}

const summaryColumns = `id, at, direction, platform_id, partner, module, method, url, http_status, status_code, duration_us,
	request_id, correlation_id, from_party, to_party, object_ids, error`

// List returns one page of exchanges and the cursor of the next page (0
// when this is the last): Before of a list newest first, After of one
// oldest first.
func List(ctx context.Context, q store.Querier, f Filter) ([]Exchange, int64, error) {
	var w store.Conds
	if f.PlatformID != 0 {
		w.And("platform_id = " + w.Arg(f.PlatformID))
	}
	if f.Partner != "" {
		w.And("partner = " + w.Arg(f.Partner))
	}
	if f.Module != "" {
		w.And("module = " + w.Arg(f.Module))
	}
	if f.Direction != "" {
		w.And("direction = " + w.Arg(string(f.Direction)))
	}
	if f.CorrelationID != "" {
		w.And("correlation_id = " + w.Arg(f.CorrelationID))
	}
	if f.ObjectID != "" {
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(f.ObjectID)
		w.And("object_ids LIKE " + w.Arg("%|"+esc+"|%") + ` ESCAPE '\'`)
	}
	if !f.From.IsZero() {
		w.And("at >= " + w.Arg(f.From.UnixMicro()))
	}
	if !f.To.IsZero() {
		w.And("at < " + w.Arg(f.To.UnixMicro()))
	}
	switch c := f.StatusClass; {
	case c == "failed":
		w.And("http_status = 0")
	case len(c) == 3:
		lo := int(c[0]-'0') * 100
		w.And("http_status >= " + w.Arg(lo) + " AND http_status < " + w.Arg(lo+100))
	case len(c) == 4:
		lo := int(c[0]-'0') * 1000
		w.And("status_code >= " + w.Arg(lo) + " AND status_code < " + w.Arg(lo+1000))
	}
	order := "id DESC"
	if f.Oldest {
		// By start time: an inbound request is recorded when its answer is
		// sent, after the pushes it caused may have been.
		order = "at ASC, id ASC"
		if f.After > 0 {
			a := w.Arg(f.After)
			w.And("(at > (SELECT at FROM traffic WHERE id = " + a + ") OR (at = (SELECT at FROM traffic WHERE id = " + a + ") AND id > " + a + "))")
		}
	} else if f.Before > 0 {
		w.And("id < " + w.Arg(f.Before))
	}
	limit := f.Limit
	switch {
	case limit <= 0:
		limit = 100
	case limit > MaxLimit:
		limit = MaxLimit
	}
	cols := summaryColumns
	if f.Bodies {
		cols += ", request_header, response_header, request_body, response_body"
	}
	rows, err := q.Query(ctx, "SELECT "+cols+" FROM traffic"+w.Where()+" ORDER BY "+order+" LIMIT "+strconv.Itoa(limit+1), w.Args()...)
	if err != nil {
		return nil, 0, err
	}
	out, err := store.Collect(rows, func(r store.Row) (Exchange, error) { return scan(r, f.Bodies) })
	if err != nil {
		return nil, 0, err
	}
	var next int64
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// Find returns one whole exchange; platformID, when not 0, must be its
// partner (another's answers not found).
func Find(ctx context.Context, q store.Querier, id, platformID int64) (*Exchange, error) {
	query := "SELECT " + summaryColumns + ", request_header, response_header, request_body, response_body FROM traffic WHERE id = $1"
	args := []any{id}
	if platformID != 0 {
		query += " AND platform_id = $2"
		args = append(args, platformID)
	}
	e, err := scan(q.QueryRow(ctx, query, args...), true)
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no exchange " + strconv.FormatInt(id, 10)}
	}
	if err != nil {
		return nil, err
	}
	return &e, nil
}

func scan(r store.Row, bodies bool) (Exchange, error) {
	var e Exchange
	var at int64
	var dir, ids string
	dest := []any{&e.ID, &at, &dir, &e.PlatformID, &e.Partner, &e.Module, &e.Method, &e.URL, &e.HTTPStatus, &e.StatusCode,
		&e.DurationUS, &e.RequestID, &e.CorrelationID, &e.FromParty, &e.ToParty, &ids, &e.Error}
	var reqH, respH string
	var reqB, respB []byte
	if bodies {
		dest = append(dest, &reqH, &respH, &reqB, &respB)
	}
	if err := r.Scan(dest...); err != nil {
		return e, err
	}
	e.At = time.UnixMicro(at).UTC()
	e.Direction = Direction(dir)
	e.ObjectIDs = splitIDs(ids)
	if bodies {
		if reqH != "" {
			_ = json.Unmarshal([]byte(reqH), &e.RequestHeader)
		}
		if respH != "" {
			_ = json.Unmarshal([]byte(respH), &e.ResponseHeader)
		}
		e.RequestBody, e.ResponseBody = gunzip(reqB), gunzip(respB)
	}
	return e, nil
}
