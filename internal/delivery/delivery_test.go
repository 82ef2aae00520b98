package delivery_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/delivery"
)

// memQueue is an in-memory Queue: per receiver, a list of (key, seq)
// items, claimed as the heads of their keys.
type memQueue struct {
	mu       sync.Mutex
	open     map[int64][]memItem
	leased   map[string]bool
	got      map[int64][]string // what each receiver received, in order
	inFlight map[int64]int
	maxIn    map[int64]int
	fail     map[int64]int // receiver → attempts left to fail
	delay    time.Duration
	claims   int
}

type memItem struct {
	key string
	seq int
}

func newMemQueue() *memQueue {
	return &memQueue{open: map[int64][]memItem{}, leased: map[string]bool{}, got: map[int64][]string{},
		inFlight: map[int64]int{}, maxIn: map[int64]int{}, fail: map[int64]int{}}
}

func (q *memQueue) Claim(_ context.Context, r int64, n int) (delivery.Claim, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	var c delivery.Claim
	seen := map[string]bool{}
	for _, it := range q.open[r] {
		c.Backlog++
		k := fmt.Sprint(r, it.key)
		if seen[it.key] || q.leased[k] {
			seen[it.key] = true
			continue
		}
		seen[it.key] = true
		if len(c.Items) < n {
			q.leased[k] = true
			c.Items = append(c.Items, delivery.Item{Key: it.key, Committed: time.Now(), Value: it})
		}
	}
	return c, nil
}

func (q *memQueue) Send(_ context.Context, r int64, it delivery.Item) delivery.Result {
	q.mu.Lock()
	q.inFlight[r]++
	q.maxIn[r] = max(q.maxIn[r], q.inFlight[r])
	failing := q.fail[r] > 0
	if failing {
		q.fail[r]--
	}
	q.mu.Unlock()
	time.Sleep(q.delay)
	q.mu.Lock()
	q.inFlight[r]--
	q.mu.Unlock()
	if failing {
		return delivery.Result{Outcome: delivery.Retry, RetryAt: time.Now().Add(20 * time.Millisecond)}
	}
	return delivery.Result{Outcome: delivery.Delivered}
}

func (q *memQueue) Settle(_ context.Context, r int64, rs []delivery.Result) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, res := range rs {
		it := res.Item.Value.(memItem)
		delete(q.leased, fmt.Sprint(r, it.key))
		if res.Outcome == delivery.Retry {
			continue
		}
		q.got[r] = append(q.got[r], fmt.Sprintf("%s#%d", it.key, it.seq))
		for i, o := range q.open[r] {
			if o == it {
				q.open[r] = append(q.open[r][:i:i], q.open[r][i+1:]...)
				break
			}
		}
	}
	return nil
}

func (q *memQueue) Renew(context.Context, int64, []delivery.Item) error { return nil }

func (q *memQueue) Due(context.Context) ([]int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []int64
	for r, items := range q.open {
		if len(items) > 0 {
			out = append(out, r)
		}
	}
	return out, nil
}

func (q *memQueue) Label(r int64) string { return fmt.Sprint("r", r) }

func (q *memQueue) add(r int64, key string, seq int) {
	q.mu.Lock()
	q.open[r] = append(q.open[r], memItem{key, seq})
	q.mu.Unlock()
}

func (q *memQueue) done() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, items := range q.open {
		if len(items) > 0 {
			return false
		}
	}
	return true
}

func waitDone(t *testing.T, q *memQueue) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !q.done() {
		if time.Now().After(deadline) {
			t.Fatal("the queue was not delivered")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWindowAndPerKeyOrder: a receiver's items of different keys travel in
// parallel, never more than Window at once; the items of one key arrive in
// order.
func TestWindowAndPerKeyOrder(t *testing.T) {
	t.Parallel()
	q := newMemQueue()
	q.delay = 2 * time.Millisecond
	for seq := range 5 {
		for k := range 20 {
			q.add(1, fmt.Sprintf("k%02d", k), seq)
		}
	}
	e := delivery.New(q, delivery.Config{Name: "test", Window: 4, Batch: 16, Poll: 20 * time.Millisecond}, nil, nil)
	e.Start(context.Background())
	defer e.Stop()
	e.Wake(1)
	waitDone(t, q)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.maxIn[1] > 4 {
		t.Errorf("%d items in flight at once, window 4", q.maxIn[1])
	}
	if q.maxIn[1] < 2 {
		t.Errorf("items of different keys never travelled in parallel (max %d in flight)", q.maxIn[1])
	}
	last := map[string]int{}
	for _, g := range q.got[1] {
		key, seq := g[:3], int(g[4]-'0')
		if s, ok := last[key]; ok && seq != s+1 {
			t.Fatalf("key %s: #%d after #%d: %v", key, seq, s, q.got[1])
		}
		last[key] = seq
	}
	if len(q.got[1]) != 100 {
		t.Errorf("delivered %d items, want 100", len(q.got[1]))
	}
}

// TestDownReceiverDoesNotSlowOthers: a receiver whose attempts fail backs
// off and is retried, while another receiver's items go through.
func TestDownReceiverDoesNotSlowOthers(t *testing.T) {
	t.Parallel()
	q := newMemQueue()
	q.fail[2] = 3
	for k := range 10 {
		q.add(1, fmt.Sprintf("k%02d", k), 0)
		q.add(2, fmt.Sprintf("k%02d", k), 0)
	}
	e := delivery.New(q, delivery.Config{Name: "test", Poll: 20 * time.Millisecond}, nil, nil)
	e.Start(context.Background())
	defer e.Stop()
	e.Wake(1)
	e.Wake(2)
	waitDone(t, q)
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.got[1]) != 10 || len(q.got[2]) != 10 {
		t.Errorf("delivered %d and %d, want 10 each", len(q.got[1]), len(q.got[2]))
	}
}

// releasingQueue is a memQueue that holds its receivers: it records each
// Release, and whether a claim came while the receiver was released.
type releasingQueue struct {
	*memQueue
	released []int64
}

func (q *releasingQueue) Release(_ context.Context, r int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.released = append(q.released, r)
}

func (q *releasingQueue) releases() []int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]int64(nil), q.released...)
}

// TestLingerThenRelease: a worker with nothing to do waits Linger for more
// work (a wake meanwhile keeps it, with no release) and then, ending,
// releases its receiver once.
func TestLingerThenRelease(t *testing.T) {
	q := &releasingQueue{memQueue: newMemQueue()}
	// A long linger: the second item must come within it even on a loaded
	// machine.
	e := delivery.New(q, delivery.Config{Name: "t", Poll: time.Hour, Linger: 2 * time.Second}, nil, nil)
	e.Start(context.Background())
	defer e.Stop()
	q.add(1, "a", 1)
	e.Wake(1)
	waitDone(t, q.memQueue)
	// Within the linger more work arrives: the same worker takes it.
	q.add(1, "a", 2)
	e.Wake(1)
	waitDone(t, q.memQueue)
	if r := q.releases(); len(r) != 0 {
		t.Fatalf("released %v while work kept coming", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for e.Busy(1) {
		if time.Now().After(deadline) {
			t.Fatal("the idle worker never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if r := q.releases(); len(r) != 1 || r[0] != 1 {
		t.Errorf("released %v as the worker ended, want [1]", r)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if got := q.got[1]; fmt.Sprint(got) != "[a#1 a#2]" {
		t.Errorf("delivered %v", got)
	}
}
