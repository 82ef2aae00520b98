package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// CommandBehavior is how the CPO simulator answers one command. The zero
// value is a well-behaved CPO: ACCEPTED with a 30 s timeout, then a
// CommandResult ACCEPTED, then what a real CPO does next (a started session
// for START_SESSION; a completed session and its CDR for STOP_SESSION).
type CommandBehavior struct {
	// Response is the CommandResponse result (default ACCEPTED); Timeout
	// its timeout in seconds (default 30).
	Response string
	Timeout  int
	// StatusCode is the envelope's status_code (default 1000).
	StatusCode int
	// Silent holds the request without answering until the caller gives up.
	Silent bool
	// NoResult accepts the command and never posts a CommandResult.
	NoResult bool
	// Result is the CommandResult posted (default ACCEPTED).
	Result string
	// Manual posts the result but does nothing more (no session, no CDR).
	Manual bool
}

// handleCommand is the CPO's commands receiver.
func (c *CPO) handleCommand(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/cpo/commands")
	if r.Method != http.MethodPost || len(seg) != 1 {
		c.Reply(w, http.StatusNotFound, 2000, nil)
		return
	}
	cmd := seg[0]
	body, read := c.ReadObject(w, r)
	if !read {
		return
	}
	c.st.mu.Lock()
	c.st.commands = append(c.st.commands, Command{Command: cmd, Body: body, Header: r.Header.Clone()})
	fn := c.st.onCommand
	c.st.mu.Unlock()
	var b CommandBehavior
	if fn != nil {
		b = fn(cmd, body)
	}
	if b.Silent {
		<-r.Context().Done()
		return
	}
	if b.Response == "" {
		b.Response = ocpi.CommandAccepted
	}
	if b.Timeout == 0 {
		b.Timeout = 30
	}
	if b.StatusCode == 0 {
		b.StatusCode = 1000
	}
	answer := map[string]any{"result": b.Response, "timeout": b.Timeout}
	if c.legacy() {
		// 2.1.1 CommandResponse: the result alone.
		answer = map[string]any{"result": b.Response}
	}
	c.Reply(w, http.StatusOK, b.StatusCode, answer)
	if b.Response != ocpi.CommandAccepted || b.NoResult || b.StatusCode != 1000 {
		return
	}
	if b.Result == "" {
		b.Result = ocpi.CommandAccepted
	}
	responseURL, _ := body["response_url"].(string)
	c.later(func(ctx context.Context) {
		if err := c.PostResult(ctx, responseURL, b.Result); err != nil {
			c.fail(fmt.Errorf("%s result: %w", cmd, err))
			return
		}
		if b.Manual || b.Result != ocpi.CommandAccepted {
			return
		}
		switch cmd {
		case ocpi.CommandStartSession:
			if _, err := c.StartSession(ctx, body); err != nil {
				c.fail(fmt.Errorf("start session: %w", err))
			}
		case ocpi.CommandStopSession:
			id, _ := body["session_id"].(string)
			if err := c.StopSession(ctx, id); err != nil {
				c.fail(fmt.Errorf("stop session %s: %w", id, err))
			}
		}
	})
}

// later runs fn in the background, as a CPO answers after it has
// responded, with 30 seconds to do it; Wait waits for it.
func (c *CPO) later(fn func(ctx context.Context)) {
	c.st.background.Add(1)
	go func() {
		defer c.st.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		fn(ctx)
	}()
}

func (c *CPO) fail(err error) {
	c.st.mu.Lock()
	c.st.errs = append(c.st.errs, err)
	c.st.mu.Unlock()
}

// PostResult posts a CommandResult to a response_url.
func (c *CPO) PostResult(ctx context.Context, responseURL, result string) error {
	return ok(c.Raw(ctx, http.MethodPost, responseURL, map[string]any{"result": result}, nil))
}

// ProfileRequests returns the charging profile requests received.
func (c *CPO) ProfileRequests() []Command {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return append([]Command(nil), c.st.profiles...)
}

// handleProfile is the CPO's chargingprofiles receiver: it accepts every
// request and posts the result (ACCEPTED; for a GET, with the profile).
func (c *CPO) handleProfile(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/cpo/chargingprofiles")
	if len(seg) != 1 {
		c.Reply(w, http.StatusNotFound, 2000, nil)
		return
	}
	var body map[string]any
	if r.Method == http.MethodPut {
		_ = json.NewDecoder(r.Body).Decode(&body)
	}
	c.st.mu.Lock()
	c.st.profiles = append(c.st.profiles, Command{Command: r.Method, Body: body, Header: r.Header.Clone()})
	c.st.mu.Unlock()
	responseURL := r.URL.Query().Get("response_url")
	if body != nil {
		responseURL, _ = body["response_url"].(string)
	}
	c.OK(w, map[string]any{"result": "ACCEPTED", "timeout": 30})
	result := map[string]any{"result": "ACCEPTED"}
	if r.Method == http.MethodGet {
		result["profile"] = map[string]any{"start_date_time": ocpi.NewDateTime(c.Now()),
			"charging_profile": map[string]any{"charging_rate_unit": "W", "charging_profile_period": []any{
				map[string]any{"start_period": 0, "limit": 11000}}}}
	}
	c.later(func(ctx context.Context) {
		if err := ok(c.Raw(ctx, http.MethodPost, responseURL, result, nil)); err != nil {
			c.fail(fmt.Errorf("charging profile result: %w", err))
		}
	})
}

// PutActiveProfile sends an ActiveChargingProfile update for a session to
// the hub's chargingprofiles SENDER endpoint.
func (c *CPO) PutActiveProfile(ctx context.Context, sessionID string, profile any) (*ocpiclient.Response, error) {
	base, found := c.HubEndpoint("chargingprofiles", "SENDER")
	if !found {
		return nil, fmt.Errorf("the hub lists no chargingprofiles SENDER")
	}
	return c.Raw(ctx, http.MethodPut, base+"/"+url.PathEscape(sessionID), profile, nil)
}
