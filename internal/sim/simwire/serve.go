package simwire

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// Serve runs h on l in the background, the way every simulator serves: a
// real HTTP server on loopback with a header timeout.
func Serve(l net.Listener, h http.Handler) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return srv
}

// Client returns the HTTP client a simulator calls the hub with. It has its
// own transport: httptest servers closing in the same process close the
// idle connections of http.DefaultTransport, under a request that was about
// to reuse one.
func Client() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// Background is a simulator's work off the request path: Go starts it,
// Closing tells hung handlers to give up, Stop cancels it all and waits.
// The zero value is not ready: use NewBackground.
type Background struct {
	closing chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

// NewBackground returns a running Background.
func NewBackground() *Background { return &Background{closing: make(chan struct{})} }

// Closing is closed once Stop is called.
func (b *Background) Closing() <-chan struct{} { return b.closing }

// Go runs fn in the background with a context that ends at Stop.
func (b *Background) Go(fn func(ctx context.Context)) {
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-b.closing:
				cancel()
			case <-ctx.Done():
			}
		}()
		fn(ctx)
	}()
}

// Stop cancels the background work, calls stop (the server's Close) once,
// and waits for the work to end. Later calls do nothing.
func (b *Background) Stop(stop func()) {
	b.once.Do(func() {
		close(b.closing)
		stop()
		b.wg.Wait()
	})
}
