package tracing

import "testing"

// NewCollector starts an OTLP/HTTP collector on loopback for the
// end-to-end tests.
func NewCollector(t *testing.T) *collector { return newCollector(t) }

// URL returns the collector's endpoint.
func (c *collector) URL() string { return c.srv.URL }

// Header returns the headers of the first export.
func (c *collector) Header() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, h := range c.header {
		out = append(out, h.Get("Api-Key"))
	}
	return out
}
