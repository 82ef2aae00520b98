package sim

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

// CPO22 is a CPO management system of the OCPI 2.2 era, with the quirks
// such systems have:
//
//   - it speaks only OCPI 2.2 and sends raw tokens (Authorization: Token
//     <raw>, no Base64);
//   - it answers the hub's credentials POST with HTTP 201 and no body, and
//     then registers back by itself (Options.RegisterBack);
//   - it reads the hub's versions and details again before every push;
//   - it treats any answer to a push but HTTP 201 as a failure — except
//     the 200 OCPI prescribes for a PUT or PATCH replacing an object the
//     receiver already holds (2.2.1-d2 erratum; 2.2 says the same), which
//     the spec allows and which it therefore accepts for objects it pushed
//     before.
type CPO22 struct {
	*CPO
	mu     sync.Mutex
	pushed map[string]bool
}

// StartCPO22 starts a 2.2 CPO on 127.0.0.1.
func StartCPO22(name, cc, pid string, logger *slog.Logger, tweak ...func(*Options)) (*CPO22, error) {
	c, err := StartCPO(name, cc, pid, logger, append([]func(*Options){func(o *Options) {
		o.Versions = []string{"2.2"}
		o.RawTokens = true
		o.RegisterBack = true
	}}, tweak...)...)
	if err != nil {
		return nil, err
	}
	return &CPO22{CPO: c, pushed: map[string]bool{}}, nil
}

// Push re-discovers the hub's endpoints, pushes, and fails on any answer
// but 201 (200 for an object it pushed before).
func (c *CPO22) Push(ctx context.Context, module, method string, body any, header http.Header, path ...string) (*ocpiclient.Response, error) {
	c.CPO.mu.Lock()
	versionsURL, version := c.hubVersions, c.hubVersion
	c.CPO.mu.Unlock()
	if err := c.discoverHub(ctx, versionsURL, version); err != nil {
		return nil, fmt.Errorf("re-discover the hub before a push: %w", err)
	}
	resp, err := c.CPO.Push(ctx, module, method, body, header, path...)
	if err != nil {
		return resp, err
	}
	key := module + "/" + strings.Join(path, "/")
	c.mu.Lock()
	before := c.pushed[key]
	c.mu.Unlock()
	okStatus := resp.HTTPStatus == http.StatusCreated || (before && resp.HTTPStatus == http.StatusOK)
	if method == http.MethodDelete {
		okStatus = resp.HTTPStatus == http.StatusOK || resp.HTTPStatus == http.StatusCreated
	}
	if !okStatus || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
		return resp, fmt.Errorf("push failed: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	c.mu.Lock()
	c.pushed[key] = true
	c.mu.Unlock()
	return resp, nil
}

// PutLocation pushes a whole location and requires success.
func (c *CPO22) PutLocation(ctx context.Context, id string, loc any) error {
	_, err := c.Push(ctx, "locations", http.MethodPut, loc, nil, id)
	return err
}

// registerBack completes a handshake the hub started: the platform POSTs
// its own credentials (with a new token B) to the hub, authenticating with
// the token the hub sent in its POST, and keeps the token C it gets.
func (p *Platform) registerBack(version string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tokenB := "B-" + uuid.NewString()
	p.mu.Lock()
	p.tokenIn = tokenB
	p.mu.Unlock()
	var answer json.RawMessage
	_, err := p.CallHub(ctx, http.MethodPost, "credentials", "", "", p.credentialsFor(version, tokenB), &answer)
	if err == nil {
		var theirs struct {
			Token string `json:"token"`
		}
		if err = json.NewDecoder(bytes.NewReader(answer)).Decode(&theirs); err == nil {
			p.mu.Lock()
			p.tokenOut = theirs.Token
			p.mu.Unlock()
		}
	}
	if err != nil {
		p.logger.Error("registering back failed", "error", err)
	}
}
