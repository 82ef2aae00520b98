package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
)

// Key is a row's place in list order: last_updated (microseconds), then pk.
type Key struct{ LastUpdated, PK int64 }

func (k Key) less(o Key) bool {
	return k.LastUpdated < o.LastUpdated || k.LastUpdated == o.LastUpdated && k.PK < o.PK
}

// minKey is before every row.
var minKey = Key{math.MinInt64, math.MinInt64}

// DefaultSpan is the number of rows a bucket of a position index holds after
// it is cut (Positions.Span): an OFFSET page skips fewer than 2 × Span rows.
const DefaultSpan = 512

// maxIndexes bounds the filters a Positions keeps an index for.
const maxIndexes = 64

// Positions is a sparse position index of a document table's list order
// (last_updated, pk), per filter (List.Where with its arguments): boundary
// keys that cut the order into buckets of about Span rows, with each
// bucket's row count. It gives List three things that otherwise scan:
//
//   - the total (X-Total-Count): the sum of the bucket counts;
//   - a date_from/date_to total: the buckets inside the window plus the rows
//     of the two edge buckets counted up to the date;
//   - an OFFSET page: the bucket holding the position, then fewer than
//     2 × Span rows skipped inside it.
//
// A boundary is any key, not a row: rows may come and go around it. A
// bucket's count is exact once counted; the writer tells Changed the keys it
// removed and added after its commit (a PATCH that raises last_updated moves
// a row from its bucket to the last one) and the counts follow without a
// query. A filtered index, whose Where the writer's keys say nothing about,
// counts the buckets holding them again (each ≤ 2 × Span rows). Writes of
// other processes (replicas) are not seen here: a count older than TTL
// (spread over [TTL, 1.5 TTL) per bucket) is counted again in the background
// by the next list, which answers with the counts it has; so they show
// within TTL plus one refresh, as with Totals. So does a change whose commit
// lands inside a recount of its bucket while its Changed arrives after it,
// the one race that can put a count off. A bucket that grows past 2 × Span
// (the last one, under a status stream) is cut again; an empty one is
// merged into its predecessor. The first list of a filter cuts its whole
// range: one walk of the (last_updated, pk) index.
//
// A list that races a write answers with the state just before or just
// after it (the counts and the page are separate statements), as an OFFSET
// query would a moment earlier or later. Set it on List.Positions; it needs
// an index on (last_updated, pk) after the equality conditions of Where.
type Positions struct {
	TTL time.Duration
	// Now tells the time (default time.Now); pass the service's clock.
	Now func() time.Time
	// Span is the rows per bucket (default DefaultSpan).
	Span int64

	mu  sync.Mutex
	idx map[string]*posIndex
	// refresh counts the expired buckets again in the background, one run
	// at a time; readers meanwhile use the counts they have.
	refreshing bool
	refreshed  sync.WaitGroup
}

// posIndex is the index of one filter.
type posIndex struct {
	buckets  []*bucket // ordered by start; buckets[0].start is minKey
	filtered bool      // List.Where is not empty
}

// bucket holds the rows from start up to the next bucket's start.
type bucket struct {
	start Key
	n     int64
	// gen moves with every change in the bucket (a key reported, a cut);
	// a count taken under an older gen is not stored.
	gen     uint64
	counted bool
	at      time.Time
}

// bucketView is one bucket as a reader saw it.
type bucketView struct {
	b     *bucket
	start Key
	gen   uint64
	n     int64
	fresh bool
}

// Changed records that rows with the keys removed disappeared and rows with
// the keys added appeared (an insert adds its key, a delete removes its
// key, a moved last_updated does both). Call it after the commit
// (Tx.AfterCommit). A counted bucket takes the change into its count; a
// count in flight, which may or may not have seen the change, is dropped.
func (p *Positions) Changed(removed, added []Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ix := range p.idx {
		for _, d := range []struct {
			keys []Key
			by   int64
		}{{removed, -1}, {added, 1}} {
			for _, k := range d.keys {
				b := ix.buckets[ix.find(k)]
				b.gen++
				// Whether the row passes a filter's Where is not known
				// here: such a bucket is counted again.
				if b.n += d.by; b.n < 0 || ix.filtered {
					b.counted = false
				}
			}
		}
	}
}

// Invalidate marks every count stale (a change whose keys are unknown).
func (p *Positions) Invalidate() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ix := range p.idx {
		for _, b := range ix.buckets {
			b.gen++
			b.counted = false
		}
	}
}

// find returns the index of the bucket holding k.
func (ix *posIndex) find(k Key) int {
	return sort.Search(len(ix.buckets), func(i int) bool { return k.less(ix.buckets[i].start) }) - 1
}

func (p *Positions) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return clock.Real{}.Now()
}

func (p *Positions) span() int64 {
	if p.Span > 0 {
		return p.Span
	}
	return DefaultSpan
}

// snapshot returns the buckets of l's filter as they are now.
func (p *Positions) snapshot(key string, filtered bool) []bucketView {
	now := p.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	ix := p.idx[key]
	if ix == nil {
		if p.idx == nil || len(p.idx) >= maxIndexes {
			p.idx = map[string]*posIndex{}
		}
		ix = &posIndex{buckets: []*bucket{{start: minKey}}, filtered: filtered}
		p.idx[key] = ix
	}
	out := make([]bucketView, len(ix.buckets))
	for i, b := range ix.buckets {
		out[i] = bucketView{b: b, start: b.start, gen: b.gen, n: b.n, fresh: b.counted && now.Sub(b.at) < p.ttl(b)}
	}
	return out
}

// ttl staggers the buckets' expiry over [TTL, 1.5 TTL), so the recounts
// that show other replicas' writes spread over reads instead of falling on
// one.
func (p *Positions) ttl(b *bucket) time.Duration {
	if p.TTL <= 0 {
		return 0
	}
	return p.TTL + time.Duration(uint64(b.start.PK)*2654435761%1000)*p.TTL/2000
}

// view returns every bucket of l's filter with a count: those changed
// since, or counted longer than TTL ago, are counted again. Buckets grown
// past twice the span are cut, empty ones merged, for the next readers.
func (p *Positions) view(ctx context.Context, q Querier, l List) ([]bucketView, error) {
	where, args := l.baseWhere()
	key := fmt.Sprint(l.Table, where, args)
	v := p.snapshot(key, len(where) > 0)
	expired := false
	for i := range v {
		if v[i].fresh {
			continue
		}
		if v[i].b.counted {
			expired = true // used as it is; counted again in the background
			continue
		}
		if err := p.recount(ctx, q, l, v, i); err != nil {
			return nil, err
		}
	}
	if expired {
		p.refresh(ctx, q, l, v)
	}
	if err := p.reshape(ctx, q, l, key, v); err != nil {
		return nil, err
	}
	return v, nil
}

// recount counts bucket i of v again and stores the count unless the bucket
// changed meanwhile.
func (p *Positions) recount(ctx context.Context, q Querier, l List, v []bucketView, i int) error {
	var end *Key
	if i+1 < len(v) {
		end = &v[i+1].start
	}
	n, err := l.countRange(ctx, q, v[i].start, end, 0)
	if err != nil {
		return err
	}
	v[i].n = n
	now := p.now()
	p.mu.Lock()
	if b := v[i].b; b.gen == v[i].gen {
		b.n, b.counted, b.at = n, true, now
	}
	p.mu.Unlock()
	return nil
}

// refresh starts counting the buckets of v older than the TTL again, in the
// background, unless a refresh runs already: a reader never waits for the
// recounts that only show other replicas' writes (a thousand buckets expire
// every TTL at a million EVSEs).
func (p *Positions) refresh(ctx context.Context, q Querier, l List, v []bucketView) {
	p.mu.Lock()
	if p.refreshing {
		p.mu.Unlock()
		return
	}
	p.refreshing = true
	p.refreshed.Add(1)
	p.mu.Unlock()
	v = slices.Clone(v)
	go func() {
		defer p.refreshed.Done()
		defer func() {
			p.mu.Lock()
			p.refreshing = false
			p.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		now := p.now()
		for i := range v {
			p.mu.Lock()
			b := v[i].b
			stale := b.counted && now.Sub(b.at) >= p.ttl(b)
			v[i].gen = b.gen
			p.mu.Unlock()
			if !stale {
				continue
			}
			if p.recount(ctx, q, l, v, i) != nil {
				return
			}
		}
	}()
}

// reshape cuts buckets that grew past twice the span and drops empty ones.
// It changes the index, not v: the caller's view stays valid.
func (p *Positions) reshape(ctx context.Context, q Querier, l List, key string, v []bucketView) error {
	span := p.span()
	for i := range v {
		if v[i].n <= 2*span {
			continue
		}
		var end *Key
		if i+1 < len(v) {
			end = &v[i+1].start
		}
		cuts, err := l.cuts(ctx, q, v[i].start, end, span)
		if err != nil {
			return err
		}
		p.mu.Lock()
		ix := p.idx[key]
		j := -1
		if ix != nil {
			j = ix.find(v[i].start)
		}
		if j >= 0 && ix.buckets[j] == v[i].b {
			b := v[i].b
			// Counts from the walk are exact if nothing changed in the
			// range meanwhile; the last piece holds the rest.
			exact := b.gen == v[i].gen && b.counted
			now := p.now()
			var pieces []*bucket
			for _, c := range cuts {
				pieces = append(pieces, &bucket{start: c, n: span, at: now})
			}
			total := b.n
			b.gen++
			if len(pieces) > 0 {
				last := total - span*int64(len(pieces))
				if last < 0 {
					exact = false
				}
				b.n = span
				pieces[len(pieces)-1].n = last
				for _, pc := range pieces {
					pc.counted = exact
				}
				b.counted = exact
				ix.buckets = append(ix.buckets[:j+1], append(pieces, ix.buckets[j+1:]...)...)
			}
		}
		p.mu.Unlock()
	}
	// Merge empty buckets into their predecessor: a status stream empties
	// the old buckets as it moves their rows to the end.
	p.mu.Lock()
	defer p.mu.Unlock()
	ix := p.idx[key]
	if ix == nil {
		return nil
	}
	kept := ix.buckets[:1]
	for _, b := range ix.buckets[1:] {
		if b.counted && b.n == 0 {
			kept[len(kept)-1].gen++ // its range grew: a count in flight is of the old one
			continue
		}
		kept = append(kept, b)
	}
	clear(ix.buckets[len(kept):])
	ix.buckets = kept
	return nil
}

// prefix returns the position of the first row of bucket i of v.
func prefix(v []bucketView, i int) int64 {
	var n int64
	for _, b := range v[:i] {
		n += b.n
	}
	return n
}

// before returns how many rows of l's filter have last_updated < lu.
func (l List) before(ctx context.Context, q Querier, v []bucketView, lu int64) (int64, error) {
	k := Key{lu, math.MinInt64}
	i := sort.Search(len(v), func(i int) bool { return k.less(v[i].start) }) - 1
	if i < 0 {
		return 0, nil
	}
	n, err := l.countRange(ctx, q, v[i].start, nil, lu)
	return prefix(v, i) + n, err
}

// total returns the number of rows of l's filter within its date window.
func (l List) total(ctx context.Context, q Querier, v []bucketView) (from, total int64, err error) {
	to := prefix(v, len(v))
	if l.DateTo != 0 {
		if to, err = l.before(ctx, q, v, l.DateTo); err != nil {
			return 0, 0, err
		}
	}
	if l.DateFrom != 0 {
		if from, err = l.before(ctx, q, v, l.DateFrom); err != nil {
			return 0, 0, err
		}
	}
	return from, max(to-from, 0), nil
}

// seek returns where the row at position pos of the base order is: a key at
// or before it and the rows to skip from there (fewer than a bucket holds).
func seek(v []bucketView, pos int64) (Key, int64) {
	var at int64
	i := 0
	for i+1 < len(v) && at+v[i].n <= pos {
		at += v[i].n
		i++
	}
	return v[i].start, pos - at
}

// countRange counts the rows of l's filter (without the date window) in
// [start, end), and only those with last_updated < below when below != 0.
func (l List) countRange(ctx context.Context, q Querier, start Key, end *Key, below int64) (int64, error) {
	where, args := l.baseWhere()
	conds, args := l.rangeConds(where, args, start, end)
	if below != 0 {
		args = append(args, below)
		conds = append(conds, fmt.Sprintf("%s < $%d", l.col("last_updated"), len(args)))
	}
	var n int64
	err := q.QueryRow(ctx, "SELECT COUNT(*) FROM "+l.Table+Where(conds), args...).Scan(&n)
	return n, err
}

// rangeConds adds the bounds of [start, end) to the base conditions.
func (l List) rangeConds(where []string, args []any, start Key, end *Key) ([]string, []any) {
	conds := append([]string(nil), where...)
	if start != minKey {
		args = append(args, start.LastUpdated, start.PK)
		conds = append(conds, fmt.Sprintf("(%s, %s) >= ($%d, $%d)", l.col("last_updated"), l.col("pk"), len(args)-1, len(args)))
	}
	if end != nil {
		args = append(args, end.LastUpdated, end.PK)
		conds = append(conds, fmt.Sprintf("(%s, %s) < ($%d, $%d)", l.col("last_updated"), l.col("pk"), len(args)-1, len(args)))
	}
	return conds, args
}

// cuts walks [start, end) and returns the key of every span-th row after
// the first: the starts of the buckets it is cut into.
func (l List) cuts(ctx context.Context, q Querier, start Key, end *Key, span int64) ([]Key, error) {
	var out []Key
	at := start
	for {
		where, args := l.baseWhere()
		conds, args := l.rangeConds(where, args, at, end)
		var k Key
		err := q.QueryRow(ctx, "SELECT "+l.col("last_updated")+", "+l.col("pk")+" FROM "+l.Table+Where(conds)+
			" ORDER BY "+l.col("last_updated")+", "+l.col("pk")+fmt.Sprintf(" LIMIT 1 OFFSET %d", span), args...).Scan(&k.LastUpdated, &k.PK)
		if errors.Is(err, ErrNoRows) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, k)
		at = k
	}
}
