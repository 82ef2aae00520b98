package ui

import (
	"net/http"
	"strconv"
)

// Pager is the paging bar under a table (template "pager"): where the page
// is in the list and the links to its neighbours (console paths, "" when
// there is none).
type Pager struct {
	From, To int // 1-based positions shown; 0 when the list is empty
	Total    int // -1 when unknown (keyset paging)
	First    string
	Prev     string
	Next     string
}

// Paginate returns page of items selected by the request's "page" parameter
// (1-based), size per page, and its pager. For lists that are small enough
// to hold (platforms, invitations).
func Paginate[T any](r *http.Request, items []T, size int) ([]T, Pager) {
	lo, hi, p := OffsetPager(r, len(items), size)
	return items[lo:hi], p
}

// OffsetPager pages a list of total items that the store pages itself: it
// returns the page's bounds [lo, hi) (the offset and end to fetch) from the
// request's "page" parameter, and the pager.
func OffsetPager(r *http.Request, total, size int) (lo, hi int, p Pager) {
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	pages := (total + size - 1) / size
	if page < 1 {
		page = 1
	}
	if page > pages && pages > 0 {
		page = pages
	}
	lo = min((page-1)*size, total)
	hi = min(lo+size, total)
	p = Pager{Total: total}
	if hi > lo {
		p.From, p.To = lo+1, hi
	}
	path := ConsolePath(r)
	q := r.URL.Query()
	if page > 1 {
		p.Prev = WithQuery(path, q, "page", strconv.Itoa(page-1))
		p.First = WithQuery(path, q, "page", "")
	}
	if page < pages {
		p.Next = WithQuery(path, q, "page", strconv.Itoa(page+1))
	}
	return lo, hi, p
}

// CountedPage pages a list that the store counts and pages itself: count
// gives the total, fetch the rows [offset, offset+limit) of the page the
// request's "page" parameter selects (an empty page fetches nothing).
func CountedPage[T any](r *http.Request, size int, count func() (int, error), fetch func(offset, limit int) ([]T, error)) ([]T, Pager, error) {
	total, err := count()
	if err != nil {
		return nil, Pager{}, err
	}
	lo, hi, p := OffsetPager(r, total, size)
	if hi <= lo {
		return nil, p, nil
	}
	items, err := fetch(lo, hi-lo)
	if err != nil {
		return nil, Pager{}, err
	}
	return items, p, nil
}

// KeysetPager is the pager of a keyset-paged list: "after" is the last key
// of the previous page; more tells whether a next page exists (fetch one
// extra row to know). shown is the number of rows on this page.
func KeysetPager(r *http.Request, shown int, lastKey int64, more bool) Pager {
	path := ConsolePath(r)
	q := r.URL.Query()
	p := Pager{Total: -1}
	if shown > 0 {
		p.From, p.To = 1, shown
	}
	if q.Get("after") != "" {
		p.First = WithQuery(path, q, "after", "")
	}
	if more {
		p.Next = WithQuery(path, q, "after", strconv.FormatInt(lastKey, 10))
	}
	return p
}

// ConsolePath is the request's path below /console.
func ConsolePath(r *http.Request) string {
	p := r.URL.Path
	if len(p) >= len("/console") && p[:len("/console")] == "/console" {
		p = p[len("/console"):]
	}
	if p == "" {
		return "/"
	}
	return p
}
