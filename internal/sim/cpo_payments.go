package sim

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// cpoPayments is the CPO simulator's payments receiver side: the terminals
// PTPs created on it (through the hub) and the confirmations of its
// payments.
type cpoPayments struct {
	mu        sync.Mutex
	terminals map[string]map[string]any
	advice    []map[string]any
}

// handlePaymentModules adds the Payments RECEIVER a CPO implements
// (payments.md §2.2).
func (c *CPO) handlePaymentModules() {
	c.pay = &cpoPayments{terminals: map[string]map[string]any{}}
	c.Handle("payments", "RECEIVER", "/cpo/payments", c.handlePayments)
}

// handlePayments stores terminals (POST .../terminals) and confirmations
// (POST .../financial-advice-confirmations) and serves them back by id.
func (c *CPO) handlePayments(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/cpo/payments")
	if len(seg) == 0 {
		c.Reply(w, http.StatusNotFound, 2000, nil)
		return
	}
	c.pay.mu.Lock()
	defer c.pay.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && len(seg) == 1:
		obj, read := c.ReadObject(w, r)
		if !read {
			return
		}
		switch seg[0] {
		case "terminals":
			id, _ := obj["terminal_id"].(string)
			c.pay.terminals[strings.ToUpper(id)] = obj
		case "financial-advice-confirmations":
			c.pay.advice = append(c.pay.advice, obj)
		default:
			c.Reply(w, http.StatusNotFound, 2000, nil)
			return
		}
		c.OK(w, nil)
	case r.Method == http.MethodGet && len(seg) == 2 && seg[0] == "terminals":
		if t, ok := c.pay.terminals[strings.ToUpper(seg[1])]; ok {
			c.OK(w, t)
			return
		}
		c.Reply(w, http.StatusNotFound, 2000, nil)
	case r.Method == http.MethodGet && len(seg) == 2 && seg[0] == "financial-advice-confirmations":
		for _, a := range c.pay.advice {
			if id, _ := a["id"].(string); strings.EqualFold(id, seg[1]) {
				c.OK(w, a)
				return
			}
		}
		c.Reply(w, http.StatusNotFound, 2000, nil)
	default:
		c.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
	}
}

// ReceivedTerminal returns a terminal the hub posted to the CPO (nil if
// none).
func (c *CPO) ReceivedTerminal(id string) map[string]any {
	c.pay.mu.Lock()
	defer c.pay.mu.Unlock()
	return simwire.Clone(c.pay.terminals[strings.ToUpper(id)])
}

// ReceivedAdvice returns the confirmations the hub posted to the CPO, in
// order.
func (c *CPO) ReceivedAdvice() []map[string]any {
	c.pay.mu.Lock()
	defer c.pay.mu.Unlock()
	return simwire.CloneList(c.pay.advice)
}

// Payments calls the hub's payments SENDER (the CPO's side of the module)
// with method, a path under it and a body, and returns the answer whatever
// it is.
func (c *CPO) Payments(ctx context.Context, method, path string, body any, header http.Header) (*ocpiclient.Response, error) {
	base, found := c.HubEndpoint("payments", "SENDER")
	if !found {
		return nil, fmt.Errorf("the hub lists no payments SENDER")
	}
	return c.Raw(ctx, method, base+path, body, header)
}
