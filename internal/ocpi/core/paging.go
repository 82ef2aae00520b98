package core

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Paging limits (seed §8): 50 objects by default, at most 100. A larger limit
// is capped, not rejected; X-Limit tells the client the cap.
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// PageRequest is the paging part of a list GET.
type PageRequest struct {
	Offset   int
	Limit    int
	DateFrom DateTime // zero: no lower bound (inclusive)
	DateTo   DateTime // zero: no upper bound (exclusive)
	// After is the keyset position carried by our own Link headers; it is used
	// only when it belongs to the same offset, so a client that computes
	// offsets itself still gets correct pages (through OFFSET).
	After *Cursor
}

// Cursor is the position after the last object of a page: its offset in the
// listing, and the sort key of the last object (last_updated, then a unique
// row key).
type Cursor struct {
	Offset      int
	LastUpdated int64
	Key         int64
}

// cursorParam is the query parameter our Link headers carry the cursor in. It
// is opaque to clients, who follow Link as it is.
const cursorParam = "cursor"

// Encode returns the cursor in its URL form.
func (c Cursor) Encode() string {
	raw := fmt.Sprintf("%d.%d.%d", c.Offset, c.LastUpdated, c.Key)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

// ParseCursor decodes a cursor; a malformed one is ignored by the caller.
func ParseCursor(s string) (*Cursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(string(b), ".")
	if len(parts) != 3 {
		return nil, fmt.Errorf("malformed cursor")
	}
	var c Cursor
	var errs [3]error
	c.Offset, errs[0] = strconv.Atoi(parts[0])
	c.LastUpdated, errs[1] = strconv.ParseInt(parts[1], 10, 64)
	c.Key, errs[2] = strconv.ParseInt(parts[2], 10, 64)
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("malformed cursor")
		}
	}
	return &c, nil
}

// ParsePageRequest reads offset, limit, date_from, date_to and our cursor from
// a query. Malformed values are EINVALID naming the parameter; a limit above
// maxLimit is capped.
func ParsePageRequest(q url.Values, maxLimit int) (PageRequest, error) {
	if maxLimit <= 0 || maxLimit > MaxLimit {
		maxLimit = MaxLimit
	}
	p := PageRequest{Limit: min(DefaultLimit, maxLimit)}
	if s := q.Get("offset"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return p, Invalid("offset", "must be a non-negative integer")
		}
		p.Offset = n
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return p, Invalid("limit", "must be a positive integer")
		}
		p.Limit = min(n, maxLimit)
	}
	var err error
	if s := q.Get("date_from"); s != "" {
		if p.DateFrom, err = ParseDateTime(s); err != nil {
			return p, Invalid("date_from", err.Error())
		}
	}
	if s := q.Get("date_to"); s != "" {
		if p.DateTo, err = ParseDateTime(s); err != nil {
			return p, Invalid("date_to", err.Error())
		}
	}
	if s := q.Get(cursorParam); s != "" {
		if c, err := ParseCursor(s); err == nil && c.Offset == p.Offset {
			p.After = c
		}
	}
	return p, nil
}

// Page is what a list query returns besides its objects.
type Page struct {
	Total int64   // objects matching the filters, regardless of offset and limit
	Last  *Cursor // position after the last returned object; nil if none returned
}

// SetPageHeaders writes X-Total-Count, X-Limit and, unless this is the last
// page, Link with rel="next". self is the absolute URL of the request as the
// client sees it (public base URL + path + query); every filter in it is kept.
func SetPageHeaders(h http.Header, self *url.URL, req PageRequest, page Page, maxLimit int, returned int) {
	if maxLimit <= 0 || maxLimit > MaxLimit {
		maxLimit = MaxLimit
	}
	h.Set("X-Total-Count", strconv.FormatInt(page.Total, 10))
	h.Set("X-Limit", strconv.Itoa(maxLimit))
	next := req.Offset + returned
	if returned == 0 || int64(next) >= page.Total {
		return
	}
	u := *self
	q := u.Query()
	q.Set("offset", strconv.Itoa(next))
	q.Set("limit", strconv.Itoa(req.Limit))
	if page.Last != nil {
		c := *page.Last
		c.Offset = next
		q.Set(cursorParam, c.Encode())
	} else {
		q.Del(cursorParam)
	}
	u.RawQuery = q.Encode()
	h.Set("Link", "<"+u.String()+">; rel=\"next\"")
}

// NextLink extracts the rel="next" URL from a Link header, or "".
func NextLink(h http.Header) string {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if !strings.Contains(strings.ToLower(part), `rel="next"`) && !strings.Contains(strings.ToLower(part), "rel=next") {
				continue
			}
			start, end := strings.Index(part, "<"), strings.Index(part, ">")
			if start >= 0 && end > start {
				return part[start+1 : end]
			}
		}
	}
	return ""
}
