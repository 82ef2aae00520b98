// Package webhooksim is a simulated webhook subscriber: a loopback HTTP endpoint that records deliveries
// and answers as a test tells it (tests, demo and sandbox only).
package webhooksim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
	"github.com/ocpihub/ocpihub/internal/webhook"
)

// Receiver is a webhook subscriber's endpoint: a real HTTP server on
// loopback that records every delivery and answers as the test tells it
// (a status per attempt, a hang, a slow answer).
type Receiver struct {
	listener net.Listener
	server   *http.Server

	mu         sync.Mutex
	deliveries []Delivery
	arrived    simwire.Signal
	respond    func(n int) int
	delay      time.Duration
	hang       simwire.Gate
	// clock stamps deliveries (the real clock: the receiver stands for a
	// partner's server, outside the hub's injected time).
	clock clock.Clock
}

// Delivery is one request the receiver got.
type Delivery struct {
	Header  http.Header
	Body    []byte
	Payload webhook.Payload
	At      time.Time
	// Status is what the receiver answered.
	Status int
}

// Start starts a receiver on 127.0.0.1 that answers 204.
func Start() (*Receiver, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Receiver{listener: l, respond: func(int) int { return http.StatusNoContent }, clock: clock.Real{}}
	r.server = simwire.Serve(l, http.HandlerFunc(r.serve))
	return r, nil
}

// URL returns the receiver's address (path /hooks).
func (r *Receiver) URL() string { return "http://" + r.listener.Addr().String() + "/hooks" }

// Respond sets the status answered to the n-th request (1-based); 0 holds
// the request without an answer until the sender gives up.
func (r *Receiver) Respond(fn func(n int) int) {
	r.mu.Lock()
	r.respond = fn
	r.mu.Unlock()
}

// SetStatus answers every request with code.
func (r *Receiver) SetStatus(code int) { r.Respond(func(int) int { return code }) }

// SetDelay makes every answer wait d.
func (r *Receiver) SetDelay(d time.Duration) {
	r.mu.Lock()
	r.delay = d
	r.mu.Unlock()
}

// SetHang holds every request without an answer (true) until SetHang(false)
// or the sender gives up.
func (r *Receiver) SetHang(hang bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hang.Shut(hang)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(req.Body, 4<<20))
	d := Delivery{Header: req.Header.Clone(), Body: body, At: r.clock.Now()}
	_ = json.Unmarshal(body, &d.Payload)
	r.mu.Lock()
	n := len(r.deliveries) + 1
	d.Status = r.respond(n)
	delay, hold := r.delay, r.hang.Held()
	r.deliveries = append(r.deliveries, d)
	r.mu.Unlock()
	r.arrived.Notify()
	if d.Status == 0 {
		<-req.Context().Done()
		return
	}
	if !simwire.Pass(req.Context(), hold) {
		return
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-req.Context().Done():
			return
		}
	}
	w.WriteHeader(d.Status)
}

// Deliveries returns the requests received so far.
func (r *Receiver) Deliveries() []Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Delivery(nil), r.deliveries...)
}

// WaitFor waits until at least n requests arrived, or ctx ends.
func (r *Receiver) WaitFor(ctx context.Context, n int) ([]Delivery, error) {
	got := 0
	err := r.arrived.Wait(ctx, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		got = len(r.deliveries)
		return got >= n
	})
	if err != nil {
		return r.Deliveries(), errors.Join(err, fmt.Errorf("webhook receiver got %d requests, want %d", got, n))
	}
	return r.Deliveries(), nil
}

// Close stops the receiver.
func (r *Receiver) Close() {
	r.SetHang(false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.server.Shutdown(ctx)
}
