package ocpi

import (
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi/core"
)

// The Payments module (payments.md) is OCPI 2.3.0's; ocpihub serves it under
// its 2.2.1 surface too (as the module identifier `payments`, by the
// agreement every partner makes by registering with a hub), so its types live
// here with the 2.2.1 ones.

// Terminal is a payment terminal (payments.md §3). The Payment Terminal
// Provider (PTP) owns it; CPOs assign it to their locations and EVSEs.
type Terminal struct {
	TerminalID        string       `json:"terminal_id"`
	CustomerReference string       `json:"customer_reference,omitempty"`
	PartyID           string       `json:"party_id,omitempty"`
	CountryCode       string       `json:"country_code,omitempty"`
	Address           string       `json:"address,omitempty"`
	City              string       `json:"city,omitempty"`
	PostalCode        string       `json:"postal_code,omitempty"`
	State             string       `json:"state,omitempty"`
	Country           string       `json:"country,omitempty"`
	Coordinates       *GeoLocation `json:"coordinates,omitempty"`
	InvoiceBaseURL    string       `json:"invoice_base_url,omitempty"`
	InvoiceCreator    string       `json:"invoice_creator,omitempty"`
	Reference         string       `json:"reference,omitempty"`
	LocationIDs       []string     `json:"location_ids,omitempty"`
	EVSEUIDs          []string     `json:"evse_uids,omitempty"`
	LastUpdated       DateTime     `json:"last_updated"`
}

// FinancialAdviceConfirmation is what a PTP captured for a pre-authorised
// session (payments.md §4), sent to the CPO that invoices the driver.
type FinancialAdviceConfirmation struct {
	ID                     string   `json:"id"`
	AuthorizationReference string   `json:"authorization_reference"`
	TotalCosts             PriceAny `json:"total_costs"`
	Currency               string   `json:"currency"`
	EFTData                []string `json:"eft_data"`
	CaptureStatusCode      string   `json:"capture_status_code"`
	CaptureStatusMessage   string   `json:"capture_status_message,omitempty"`
	LastUpdated            DateTime `json:"last_updated"`
}

// The Payments enumerations (payments.md §5).
var (
	InvoiceCreators    = []string{"CPO", "PTP"}
	CaptureStatusCodes = []string{"SUCCESS", "PARTIAL_SUCCESS", "FAILED"}
)

// Capture status codes.
const (
	CaptureSuccess = "SUCCESS"
	CapturePartial = "PARTIAL_SUCCESS"
	CaptureFailed  = "FAILED"
)

// TerminalAssignmentFields are the Terminal fields a CPO may change: the
// locations and EVSEs the terminal serves.
var TerminalAssignmentFields = []string{"location_ids", "evse_uids"}

// Check validates a Terminal. With requireID false the terminal_id may be
// absent (an activation request: the PTP assigns it). last_updated may be
// absent (the minimal create body is {"terminal_id": …}); the receiver sets
// it.
func (t *Terminal) Check(c *Check, requireID bool) {
	c.CiString("terminal_id", t.TerminalID, 36, requireID)
	c.CiString("customer_reference", t.CustomerReference, 36, false)
	c.PartyID("party_id", t.PartyID, false)
	c.CountryCode("country_code", t.CountryCode, false)
	if (t.PartyID == "") != (t.CountryCode == "") && !c.Failed() {
		if t.PartyID == "" {
			c.Fail("party_id", "is required with country_code: together they name the CPO the terminal is for")
		} else {
			c.Fail("country_code", "is required with party_id: together they name the CPO the terminal is for")
		}
	}
	c.CiString("address", t.Address, 45, false)
	c.CiString("city", t.City, 45, false)
	c.CiString("postal_code", t.PostalCode, 10, false)
	c.CiString("state", t.State, 20, false)
	if t.Country != "" && (len(t.Country) != 3 || !isLetters(t.Country)) {
		c.Fail("country", "must be a three-letter ISO 3166-1 alpha-3 code")
	}
	if t.Coordinates != nil {
		c.GeoLocation("coordinates", t.Coordinates.Latitude, t.Coordinates.Longitude)
	}
	c.URL("invoice_base_url", t.InvoiceBaseURL, false)
	c.Enum("invoice_creator", t.InvoiceCreator, InvoiceCreators, false)
	c.CiString("reference", t.Reference, 36, false)
	c.IDList("location_ids", t.LocationIDs, 36)
	c.IDList("evse_uids", t.EVSEUIDs, 36)
}

// IDList checks a list of CiString(n) ids: none empty, none listed twice
// (compared as CiStrings).
func (c *Check) IDList(field string, ids []string, n int) {
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		f := field + "[" + strconv.Itoa(i) + "]"
		c.CiString(f, id, n, true)
		if j, dup := seen[Key(id)]; dup && !c.Failed() {
			c.Fail(f, "%q is listed twice (also at %s[%d])", core.Truncate(id, 40), field, j)
		}
		seen[Key(id)] = i
	}
}

// Check validates a FinancialAdviceConfirmation as a PTP sends it. Both
// Price shapes are accepted for total_costs, and eft_data may be empty or
// absent (the spec's own FAILED example has none; gaps.md §4).
func (f *FinancialAdviceConfirmation) Check(c *Check) {
	c.CiString("id", f.ID, 36, true)
	c.CiString("authorization_reference", f.AuthorizationReference, 36, true)
	f.TotalCosts.check(c, "total_costs", true)
	c.Currency("currency", f.Currency, true)
	for i, line := range f.EFTData {
		c.CiString("eft_data["+strconv.Itoa(i)+"]", line, 255, true)
	}
	c.Enum("capture_status_code", f.CaptureStatusCode, CaptureStatusCodes, true)
	c.CiString("capture_status_message", f.CaptureStatusMessage, 255, false)
	c.DateTime("last_updated", f.LastUpdated, true)
}

// AdviceFor rewrites a stored FinancialAdviceConfirmation document for a
// receiver of version: total_costs in the 2.3.0 Price shape for 2.3.0, in
// the 2.2.1 shape otherwise; an absent eft_data becomes an empty list (the
// field is required on the wire).
func AdviceFor(doc Object, version string) Object {
	out := make(Object, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	if IsVersion230(version) {
		PricesTo230(out, "total_costs")
	} else {
		PricesTo221(out, "total_costs")
	}
	if _, ok := out["eft_data"].([]any); !ok {
		out["eft_data"] = []any{}
	}
	return out
}

// IsVersion230 reports whether an OCPI version speaks the 2.3.0 wire (the
// 2.3.0 Price, hub_party_id, the PTP role).
func IsVersion230(version string) bool { return strings.HasPrefix(version, "2.3") }
