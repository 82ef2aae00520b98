package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// CPO is a simulated Charge Point Operator. It serves its locations and
// tariffs SENDER interfaces from an in-memory directory (paged, date_from,
// Link) and pushes changes to the hub's RECEIVER interfaces.
type CPO struct {
	*Platform
	locations *simwire.Directory
	tariffs   *simwire.Directory
	// st is the tokens, commands, sessions and CDRs side.
	st *cpoState
	// pay is the payments receiver side.
	pay *cpoPayments
}

// StartCPO starts a CPO simulator with the modules a CPO offers.
func StartCPO(name, cc, pid string, logger *slog.Logger, tweak ...func(*Options)) (*CPO, error) {
	p, err := StartAs("CPO", name, cc, pid, logger, tweak...)
	if err != nil {
		return nil, err
	}
	c := &CPO{Platform: p, locations: simwire.NewDirectory(), tariffs: simwire.NewDirectory()}
	p.Handle("locations", "SENDER", "/cpo/locations", c.handleLocations)
	p.Handle("tariffs", "SENDER", "/cpo/tariffs", c.handleTariffs)
	c.handleSessionModules()
	c.handlePaymentModules()
	return c, nil
}

// handleLocations is the CPO's locations sender (pull is mandatory for the
// data owner): the list, or one location.
func (c *CPO) handleLocations(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/cpo/locations")
	if len(seg) == 0 {
		c.serveList(w, r, c.locations)
		return
	}
	if o := c.locations.Get(c.opts.CountryCode, c.opts.PartyID, seg[0]); o != nil {
		c.OK(w, o)
		return
	}
	c.Reply(w, http.StatusNotFound, 2003, nil)
}

// handleTariffs is the CPO's tariffs sender.
func (c *CPO) handleTariffs(w http.ResponseWriter, r *http.Request) {
	c.serveList(w, r, c.tariffs)
}

// SetLocation puts a location into the CPO's own directory without pushing
// it (what a pull will find).
func (c *CPO) SetLocation(loc any) error { return c.set(c.locations, loc) }

// SetTariff puts a tariff into the CPO's own directory without pushing it.
func (c *CPO) SetTariff(t any) error { return c.set(c.tariffs, t) }

func (c *CPO) set(d *simwire.Directory, obj any) error {
	b, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var head struct {
		CC  string `json:"country_code"`
		PID string `json:"party_id"`
		ID  string `json:"id"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return err
	}
	if head.CC == "" {
		// A legacy object has no owner fields: it is this CPO's.
		head.CC, head.PID = c.opts.CountryCode, c.opts.PartyID
	}
	if !d.Apply(http.MethodPut, []string{head.CC, head.PID, head.ID}, b) {
		return fmt.Errorf("could not store %s", head.ID)
	}
	return nil
}

// Push sends method to the hub's module RECEIVER at
// /{cc}/{pid}/{path...} of this CPO and returns the answer whatever it is;
// a successful push is applied to the CPO's own directory too.
func (c *CPO) Push(ctx context.Context, module, method string, body any, header http.Header, path ...string) (*ocpiclient.Response, error) {
	base, ok := c.HubEndpoint(module, "RECEIVER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no %s RECEIVER", module)
	}
	seg := append([]string{c.opts.CountryCode, c.opts.PartyID}, path...)
	u := base
	for _, s := range seg {
		u += "/" + url.PathEscape(s)
	}
	if header == nil {
		header = http.Header{}
	}
	resp, err := c.Raw(ctx, method, u, body, header)
	if err == nil && resp.Envelope != nil && resp.Envelope.StatusCode == 1000 {
		b, _ := json.Marshal(body)
		d := c.locations
		if module == "tariffs" {
			d = c.tariffs
		}
		d.Apply(method, seg, b)
	}
	return resp, err
}

// PutLocation pushes a whole location and requires success.
func (c *CPO) PutLocation(ctx context.Context, id string, loc any) error {
	return ok(c.Push(ctx, "locations", http.MethodPut, loc, nil, id))
}

// PatchEVSE pushes an EVSE PATCH (e.g. a status change) and requires
// success.
func (c *CPO) PatchEVSE(ctx context.Context, locationID, evseUID string, patch any) error {
	return ok(c.Push(ctx, "locations", http.MethodPatch, patch, nil, locationID, evseUID))
}

// PutTariff pushes a tariff and requires success.
func (c *CPO) PutTariff(ctx context.Context, id string, t any) error {
	return ok(c.Push(ctx, "tariffs", http.MethodPut, t, nil, id))
}

// DeleteTariff deletes a tariff at the hub and requires success.
func (c *CPO) DeleteTariff(ctx context.Context, id string) error {
	return ok(c.Push(ctx, "tariffs", http.MethodDelete, nil, nil, id))
}

func ok(resp *ocpiclient.Response, err error) error {
	if err != nil {
		return err
	}
	if resp.Envelope == nil || resp.Envelope.StatusCode != 1000 || resp.HTTPStatus >= 300 {
		return fmt.Errorf("push refused: HTTP %d %s", resp.HTTPStatus, resp.Body)
	}
	return nil
}
