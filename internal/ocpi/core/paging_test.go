package core

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestParsePageRequest reads the paging parameters of transport.md §6.
func TestParsePageRequest(t *testing.T) {
	t.Parallel()
	dt := func(s string) DateTime { d, _ := ParseDateTime(s); return d }
	tests := []struct {
		query     string
		max       int
		want      PageRequest
		wantField string // EINVALID naming this parameter
	}{
		{"", 0, PageRequest{Limit: 50}, ""},
		{"offset=0&limit=1", 0, PageRequest{Limit: 1}, ""},
		{"offset=150&limit=100", 0, PageRequest{Offset: 150, Limit: 100}, ""},
		{"limit=101", 0, PageRequest{Limit: 100}, ""},     // capped, not rejected
		{"limit=1000000", 0, PageRequest{Limit: 100}, ""}, // capped
		{"limit=500", 1000, PageRequest{Limit: 100}, ""},  // a route cannot raise the cap
		{"limit=30", 20, PageRequest{Limit: 20}, ""},      // a route may lower it
		{"", 20, PageRequest{Limit: 20}, ""},              // and the default with it
		{"date_from=2025-01-01T00:00:00&date_to=2025-02-01T00:00:00Z", 0,
			PageRequest{Limit: 50, DateFrom: dt("2025-01-01T00:00:00Z"), DateTo: dt("2025-02-01T00:00:00Z")}, ""},
		{"date_from=2025-01-01T05:30:00%2B05:30", 0, PageRequest{Limit: 50, DateFrom: dt("2025-01-01T00:00:00Z")}, ""},
		{"unknown=1&offset=2", 0, PageRequest{Offset: 2, Limit: 50}, ""},

		{"offset=-1", 0, PageRequest{}, "offset"},
		{"offset=abc", 0, PageRequest{}, "offset"},
		{"offset=1.5", 0, PageRequest{}, "offset"},
		{"offset=99999999999999999999999", 0, PageRequest{}, "offset"},
		{"limit=0", 0, PageRequest{}, "limit"},
		{"limit=-5", 0, PageRequest{}, "limit"},
		{"limit=ten", 0, PageRequest{}, "limit"},
		{"date_from=yesterday", 0, PageRequest{}, "date_from"},
		{"date_from=2025-01-01", 0, PageRequest{}, "date_from"},
		{"date_to=2025-13-01T00:00:00Z", 0, PageRequest{}, "date_to"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			t.Parallel()
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParsePageRequest(q, tt.max)
			if tt.wantField != "" {
				var e *Error
				if !errors.As(err, &e) || e.Code != EINVALID || e.Field != tt.wantField || e.Issue == "" {
					t.Fatalf("error = %v; want EINVALID on %s", err, tt.wantField)
				}
				if h, s := HTTPStatusOf(err); h != http.StatusOK || s != StatusInvalidParams {
					t.Errorf("answered %d/%d, want 200/2001", h, s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestSetPageHeaders writes X-Total-Count, X-Limit and Link.
func TestSetPageHeaders(t *testing.T) {
	t.Parallel()
	self, _ := url.Parse("https://hub.example/ocpi/2.2.1/emsp/locations?date_from=2025-01-01T00:00:00Z&date_to=2025-02-01T00:00:00Z&limit=10&x-filter=a%20b")
	tests := []struct {
		name     string
		offset   int
		limit    int
		returned int
		total    int64
		last     *Cursor
		wantLink map[string]string // query of the next URL; nil: no Link
	}{
		{"first page", 0, 10, 10, 25, &Cursor{LastUpdated: 1700000000000000, Key: 42},
			map[string]string{"offset": "10", "limit": "10", "date_from": "2025-01-01T00:00:00Z", "date_to": "2025-02-01T00:00:00Z", "x-filter": "a b",
				"cursor": Cursor{Offset: 10, LastUpdated: 1700000000000000, Key: 42}.Encode()}},
		{"middle page", 10, 10, 10, 25, &Cursor{LastUpdated: 7, Key: 9},
			map[string]string{"offset": "20", "limit": "10", "date_from": "2025-01-01T00:00:00Z", "date_to": "2025-02-01T00:00:00Z", "x-filter": "a b",
				"cursor": Cursor{Offset: 20, LastUpdated: 7, Key: 9}.Encode()}},
		{"last page, short", 20, 10, 5, 25, &Cursor{LastUpdated: 8, Key: 10}, nil},
		{"last page, exactly full", 20, 10, 10, 30, &Cursor{LastUpdated: 8, Key: 10}, nil},
		{"empty page", 0, 10, 0, 0, nil, nil},
		{"offset past the end", 40, 10, 0, 25, nil, nil},
		{"no cursor known", 0, 10, 10, 25, nil,
			map[string]string{"offset": "10", "limit": "10", "date_from": "2025-01-01T00:00:00Z", "date_to": "2025-02-01T00:00:00Z", "x-filter": "a b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			SetPageHeaders(h, self, PageRequest{Offset: tt.offset, Limit: tt.limit}, Page{Total: tt.total, Last: tt.last}, 0, tt.returned)
			if got := h.Get("X-Total-Count"); got != strconv.FormatInt(tt.total, 10) {
				t.Errorf("X-Total-Count = %q, want %d", got, tt.total)
			}
			if got := h.Get("X-Limit"); got != "100" {
				t.Errorf("X-Limit = %q, want the cap 100", got)
			}
			next := NextLink(h)
			if tt.wantLink == nil {
				if h.Get("Link") != "" {
					t.Errorf("Link on the last page: %s", h.Get("Link"))
				}
				return
			}
			if !strings.HasSuffix(h.Get("Link"), `>; rel="next"`) {
				t.Errorf("Link = %s", h.Get("Link"))
			}
			u, err := url.Parse(next)
			if err != nil || u.Scheme != "https" || u.Host != "hub.example" || u.Path != "/ocpi/2.2.1/emsp/locations" {
				t.Fatalf("next URL %q: %v", next, err)
			}
			got := map[string]string{}
			for k, v := range u.Query() {
				if len(v) != 1 {
					t.Errorf("parameter %s repeated: %q", k, v)
				}
				got[k] = v[0]
			}
			if diff := cmp.Diff(tt.wantLink, got); diff != "" {
				t.Errorf("next query (-want +got):\n%s", diff)
			}
		})
	}
	h := http.Header{}
	SetPageHeaders(h, self, PageRequest{Limit: 20}, Page{Total: 100}, 20, 20)
	if h.Get("X-Limit") != "20" {
		t.Errorf("X-Limit with a route cap of 20 = %s", h.Get("X-Limit"))
	}
}

// TestLinkRoundTrip follows Link headers through a listing of 23 objects
// with a page of 10, as a partner would: every object once, in order, with
// the filters kept and the cursor handed back to ParsePageRequest.
func TestLinkRoundTrip(t *testing.T) {
	t.Parallel()
	type obj struct {
		lastUpdated, key int64
	}
	var all []obj
	for i := range 23 {
		all = append(all, obj{lastUpdated: int64(1000 + i/3), key: int64(i + 1)})
	}
	next := "https://hub.example/ocpi/2.2.1/hubclientinfo?limit=10&date_from=2025-01-01T00:00:00Z"
	var seen []int64
	var usedCursor int
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("Link does not end")
		}
		u, err := url.Parse(next)
		if err != nil {
			t.Fatal(err)
		}
		if u.Query().Get("date_from") != "2025-01-01T00:00:00Z" {
			t.Fatalf("filter lost in %s", next)
		}
		req, err := ParsePageRequest(u.Query(), 0)
		if err != nil {
			t.Fatal(err)
		}
		// The server side: seek after the cursor when there is one, else skip.
		start := req.Offset
		if req.After != nil {
			usedCursor++
			start = 0
			for start < len(all) && (all[start].lastUpdated < req.After.LastUpdated ||
				all[start].lastUpdated == req.After.LastUpdated && all[start].key <= req.After.Key) {
				start++
			}
			if start != req.Offset {
				t.Fatalf("cursor seeks to %d, offset says %d", start, req.Offset)
			}
		}
		end := min(start+req.Limit, len(all))
		page := all[start:end]
		for _, o := range page {
			seen = append(seen, o.key)
		}
		var last *Cursor
		if len(page) > 0 {
			last = &Cursor{LastUpdated: page[len(page)-1].lastUpdated, Key: page[len(page)-1].key}
		}
		h := http.Header{}
		SetPageHeaders(h, u, req, Page{Total: int64(len(all)), Last: last}, 0, len(page))
		next = NextLink(h)
	}
	if len(seen) != 23 || seen[0] != 1 || seen[22] != 23 {
		t.Errorf("objects seen: %v", seen)
	}
	if usedCursor != 2 {
		t.Errorf("the cursor was used on %d pages, want 2", usedCursor)
	}
}

// TestCursor: an encoded cursor decodes to itself; a cursor for another
// offset, or a malformed one, is ignored (OFFSET is used instead).
func TestCursor(t *testing.T) {
	t.Parallel()
	c := Cursor{Offset: 120, LastUpdated: 1735689600123456, Key: 987654321}
	got, err := ParseCursor(c.Encode())
	if err != nil || *got != c {
		t.Errorf("ParseCursor(Encode()) = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "!!", "MQ", "MS4y", "YS5iLmM"} {
		if _, err := ParseCursor(bad); err == nil {
			t.Errorf("ParseCursor(%q) accepted", bad)
		}
	}
	q := url.Values{"offset": {"10"}, "cursor": {Cursor{Offset: 20, LastUpdated: 1, Key: 2}.Encode()}}
	if req, err := ParsePageRequest(q, 0); err != nil || req.After != nil {
		t.Errorf("a cursor of another offset was used: %+v, %v", req, err)
	}
	q = url.Values{"offset": {"10"}, "cursor": {"garbage"}}
	if req, err := ParsePageRequest(q, 0); err != nil || req.After != nil || req.Offset != 10 {
		t.Errorf("a malformed cursor: %+v, %v", req, err)
	}
}

// TestNextLink reads rel="next" among other relations and spellings.
func TestNextLink(t *testing.T) {
	t.Parallel()
	tests := []struct {
		link []string
		want string
	}{
		{nil, ""},
		{[]string{`<https://a.example/x?offset=10>; rel="next"`}, "https://a.example/x?offset=10"},
		{[]string{`<https://a.example/p>; rel="prev", <https://a.example/n>; rel="next"`}, "https://a.example/n"},
		{[]string{`<https://a.example/p>; rel="prev"`, `<https://a.example/n>; REL="NEXT"`}, "https://a.example/n"},
		{[]string{`<https://a.example/n>; rel=next`}, "https://a.example/n"},
		{[]string{`<https://a.example/p>; rel="prev"`}, ""},
		{[]string{`https://a.example/n; rel="next"`}, ""},
	}
	for _, tt := range tests {
		h := http.Header{"Link": tt.link}
		if got := NextLink(h); got != tt.want {
			t.Errorf("NextLink(%q) = %q, want %q", tt.link, got, tt.want)
		}
	}
}
