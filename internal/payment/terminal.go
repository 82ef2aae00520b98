package payment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// storedTerminal is a terminal row.
type storedTerminal struct {
	pk          int64
	id          string // as the body spells it
	ptpPlatform int64
	ptp, cpo    Party
	body        []byte
	doc         ocpi.Object
}

const terminalColumns = "pk, ptp_platform_id, ptp_country_code, ptp_party_id, cpo_country_code, cpo_party_id, body"

func scanTerminal(row interface{ Scan(...any) error }) (*storedTerminal, error) {
	var t storedTerminal
	if err := row.Scan(&t.pk, &t.ptpPlatform, &t.ptp.CountryCode, &t.ptp.PartyID, &t.cpo.CountryCode, &t.cpo.PartyID, &t.body); err != nil {
		return nil, err
	}
	doc, err := ocpi.ParseObject(t.body)
	if err != nil {
		return nil, err
	}
	t.doc = doc
	t.id, _ = doc["terminal_id"].(string)
	return &t, nil
}

// findTerminal reads a terminal; found is false when there is none.
func findTerminal(ctx context.Context, q store.Querier, id string) (t *storedTerminal, found bool, err error) {
	t, err = scanTerminal(q.QueryRow(ctx, "SELECT "+terminalColumns+" FROM terminals WHERE terminal_id = $1", ocpi.Key(id)))
	if errors.Is(err, store.ErrNoRows) {
		return nil, false, nil
	}
	return t, err == nil, err
}

// lockTerminal locks and reads a terminal inside tx (found false when
// there is none): a write of the same terminal waits for this
// transaction, which orders the outbox.
func lockTerminal(ctx context.Context, tx *store.Tx, id string) (t *storedTerminal, found bool, err error) {
	if found, err := tx.Lock(ctx, "terminals", "last_updated", "terminal_id = $1", ocpi.Key(id)); err != nil || !found {
		return nil, false, err
	}
	return findTerminal(ctx, tx, id)
}

func errUnknownTerminal(id string) error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "unknown terminal " + printable(id)}
}

// errTerminalIDTaken refuses a PTP's create (POST or PUT) of a terminal id
// another PTP holds. The PTP chooses terminal ids (payments.md §3) and CPOs
// address a terminal by its id alone, so ids are unique across the hub and
// such a create cannot succeed. The answer is 2001 naming terminal_id, as
// for an id that is not valid, and does not say that another PTP holds it.
func errTerminalIDTaken() error {
	return ocpi.Invalid("terminal_id", "cannot be used for a new terminal: choose another id (a UUID)")
}

// errCPOCreates is the answer to a CPO that tries to create a terminal.
func errCPOCreates() error {
	return &ocpi.Error{Code: ocpi.EMETHOD, StatusCode: ocpi.StatusInvalidParams,
		Message: "only a PTP creates terminals; a CPO assigns an existing terminal to its locations and EVSEs with PATCH (or PUT) " +
			"of location_ids and evse_uids on payments/terminals/{terminal_id}, or asks a PTP to activate one with POST payments/terminals/activate"}
}

// errNotPayments is the answer to a party that is neither PTP nor CPO.
func errNotPayments() error {
	return &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "the payments module serves PTPs and CPOs; your credentials name neither role"}
}

// PostTerminal is a PTP creating (or replacing) a terminal: urlID is the id
// of the URL ("" for POST on the collection, the id is in the body). created
// reports a new terminal.
func (s *Service) PostTerminal(ctx context.Context, a Actor, urlID string, raw []byte) (created bool, err error) {
	ptp, err := a.actingAs(party.RolePTP, errCPOCreates)
	if err != nil {
		return false, err
	}
	obj, err := decodeTerminal(raw)
	if err != nil {
		return false, err
	}
	id, err := terminalID(urlID, obj)
	if err != nil {
		return false, err
	}
	return s.writeByPTP(ctx, a, ptp, id, func(*storedTerminal) (ocpi.Object, error) { return obj, nil })
}

// UpdateTerminal is a PUT or PATCH of a terminal. A PTP's merges into its
// terminal (PUT creates one that does not exist); a CPO's changes the
// assignment of a terminal it may see.
func (s *Service) UpdateTerminal(ctx context.Context, a Actor, id, method string, raw []byte) (created bool, err error) {
	c := ocpi.NewCheck("")
	c.CiString("terminal_id", id, 36, true)
	if err := c.Err(); err != nil {
		return false, err
	}
	ptp, isPTP := a.party(party.RolePTP)
	if !isPTP {
		if !a.has(party.RoleCPO) {
			return false, errNotPayments()
		}
		return false, s.assign(ctx, a, id, raw)
	}
	obj, err := decodeTerminal(raw)
	if err != nil {
		return false, err
	}
	if _, err := terminalID(id, obj); err != nil {
		return false, err
	}
	// A platform that is PTP and CPO at once changes a terminal of another
	// PTP as a CPO.
	if cur, found, err := findTerminal(ctx, s.db.Read(), id); err != nil {
		return false, err
	} else if found && !a.owns(party.RolePTP, cur.ptp) && a.has(party.RoleCPO) {
		return false, s.assign(ctx, a, id, raw)
	}
	return s.writeByPTP(ctx, a, ptp, id, func(cur *storedTerminal) (ocpi.Object, error) {
		if cur == nil {
			if method == http.MethodPatch {
				return nil, errUnknownTerminal(id)
			}
			return obj, nil
		}
		doc := cloneObject(cur.doc)
		ocpi.MergePatch(doc, obj)
		return doc, nil
	})
}

// decodeTerminal reads a terminal body, checking the types of its fields.
func decodeTerminal(raw []byte) (ocpi.Object, error) {
	var t ocpi.Terminal
	if err := ocpi.Decode(raw, &t); err != nil {
		return nil, err
	}
	return ocpi.ParseObject(raw)
}

// terminalID returns the id a write names: the URL's, which the body's must
// equal when it has one; else the body's.
func terminalID(urlID string, obj ocpi.Object) (string, error) {
	body, _ := obj["terminal_id"].(string)
	switch {
	case urlID == "" && body == "":
		return "", ocpi.Invalid("terminal_id", "is required")
	case urlID == "":
		return body, nil
	case body != "" && !ocpi.EqualCI(body, urlID):
		return "", ocpi.Invalid("terminal_id", "must equal the terminal_id in the URL ("+printable(urlID)+")")
	}
	return urlID, nil
}

// writeByPTP runs a PTP's write of terminal id: build returns the new
// document from the stored terminal (nil when absent).
func (s *Service) writeByPTP(ctx context.Context, a Actor, ptp Party, id string, build func(cur *storedTerminal) (ocpi.Object, error)) (created bool, err error) {
	err = s.db.InSharedRetryUnique(ctx, func(ctx context.Context, tx *store.Tx) error {
		created = false
		cur, found, err := lockTerminal(ctx, tx, id)
		if err != nil {
			return err
		}
		// Another PTP's terminal is absent to this one: the write is checked
		// as a create, a PATCH gets the unknown terminal's 404, and a create
		// that passes every check is refused with errTerminalIDTaken. From
		// here cur is nil when the PTP writes a new terminal.
		taken := found && !a.owns(party.RolePTP, cur.ptp)
		if taken {
			cur = nil
		}
		if cur != nil {
			ptp = cur.ptp // the terminal stays with the party that created it
		}
		doc, err := build(cur)
		if err != nil {
			return err
		}
		if _, ok := doc["terminal_id"]; !ok {
			doc["terminal_id"] = id
		}
		if lu, _ := doc["last_updated"].(string); lu == "" {
			doc["last_updated"] = ocpi.FromMicros(s.now()).String()
		}
		t, body, err := canonicalTerminal(doc, true)
		if err != nil {
			return err
		}
		if cur != nil {
			if err := checkTerminalFresh(cur, t); err != nil {
				return err
			}
		}
		customer, err := s.customerOf(ctx, t, cur, a.To)
		if err != nil {
			return err
		}
		targets, err := s.checkTargets(ctx, customer, t.LocationIDs, t.EVSEUIDs, "the terminal's CPO")
		if err != nil {
			return err
		}
		if taken {
			return errTerminalIDTaken()
		}
		if cur != nil && sameJSON(cur.body, body) && samePart(cur.cpo, customer) {
			return nil
		}
		created = cur == nil
		if _, err := s.saveTerminal(ctx, tx, cur, a.PlatformID, ptp, customer, t, body, targets); err != nil {
			return err
		}
		return s.pushToCustomer(ctx, tx, a.CorrelationID, ptp, customer, t.TerminalID, body)
	})
	return created, err
}

// checkTerminalFresh applies the staleness rule (ocpi.StaleError) to a
// write of a stored terminal, by its PTP or by a CPO. A write without
// last_updated is stamped with its arrival (a PTP's PATCH without one keeps
// the stored value, which is not stale: equal timestamps are applied).
func checkTerminalFresh(cur *storedTerminal, next *ocpi.Terminal) error {
	return ocpi.CheckFresh(Module, "terminal "+printable(cur.id), ocpi.LastUpdatedOf(cur.body), next.LastUpdated)
}

// canonicalTerminal validates a terminal document and returns its stored
// form.
func canonicalTerminal(doc ocpi.Object, requireID bool) (*ocpi.Terminal, []byte, error) {
	raw, err := ocpi.MarshalObject(doc)
	if err != nil {
		return nil, nil, err
	}
	var t ocpi.Terminal
	body, err := ocpi.DecodeChecked(raw, &t, func() error {
		c := ocpi.NewCheck("")
		t.Check(c, requireID)
		return c.Err()
	})
	if err != nil {
		return nil, nil, err
	}
	return &t, body, nil
}

// saveTerminal writes a terminal row and its targets.
func (s *Service) saveTerminal(ctx context.Context, tx *store.Tx, cur *storedTerminal, platformID int64, ptp, customer Party,
	t *ocpi.Terminal, body []byte, targets []target) (int64, error) {
	pk := int64(0)
	if cur == nil {
		err := tx.QueryRow(ctx, `INSERT INTO terminals (terminal_id, ptp_platform_id, ptp_country_code, ptp_party_id, cpo_country_code,
			cpo_party_id, last_updated, body, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING pk`,
			ocpi.Key(t.TerminalID), platformID, ptp.CountryCode, ptp.PartyID, customer.CountryCode, customer.PartyID,
			t.LastUpdated.Micros(), string(body), s.now()).Scan(&pk)
		if err != nil {
			return 0, err
		}
	} else {
		pk = cur.pk
		if _, err := tx.Exec(ctx, `UPDATE terminals SET cpo_country_code = $1, cpo_party_id = $2, last_updated = $3, body = $4 WHERE pk = $5`,
			customer.CountryCode, customer.PartyID, t.LastUpdated.Micros(), string(body), pk); err != nil {
			return 0, err
		}
		if _, err := tx.Exec(ctx, "DELETE FROM terminal_targets WHERE terminal_pk = $1", pk); err != nil {
			return 0, err
		}
	}
	seen := map[target]bool{}
	for _, tg := range targets {
		if seen[tg] {
			continue
		}
		seen[tg] = true
		if _, err := tx.Exec(ctx, "INSERT INTO terminal_targets (terminal_pk, location_id, evse_uid) VALUES ($1, $2, $3)",
			pk, tg.location, tg.evse); err != nil {
			return 0, err
		}
	}
	return pk, nil
}

// pushToCustomer posts a terminal in full to its CPO's payments RECEIVER
// (payments.md §6.1 step 1), when the CPO offers one.
func (s *Service) pushToCustomer(ctx context.Context, tx *store.Tx, correlationID string, ptp, customer Party, id string, body []byte) error {
	if s.hub == nil {
		return nil
	}
	p, err := s.platformWith(ctx, party.RoleCPO, customer, Module, ocpi.InterfaceReceiver)
	if err != nil || p == nil {
		return err
	}
	return s.hub.Enqueue(ctx, tx, p.ID, hub.Push{Module: Module, ObjectKey: customerTerminalKey(id), Method: http.MethodPost,
		Path: "/terminals", Body: body, Full: true, To: customer, From: ptp, Interface: ocpi.InterfaceReceiver, CorrelationID: correlationID})
}

// GetTerminal returns a terminal the actor may see.
func (s *Service) GetTerminal(ctx context.Context, a Actor, id string) (json.RawMessage, error) {
	if !a.has(party.RolePTP) && !a.has(party.RoleCPO) {
		return nil, errNotPayments()
	}
	t, found, err := findTerminal(ctx, s.db.Read(), id)
	if err != nil {
		return nil, err
	}
	if !found || !visible(a, t) {
		return nil, errUnknownTerminal(id)
	}
	return t.body, nil
}

// visible reports whether the actor may see a terminal: its PTP, its CPO,
// and every CPO while it is unclaimed.
func visible(a Actor, t *storedTerminal) bool {
	return a.owns(party.RolePTP, t.ptp) || a.owns(party.RoleCPO, t.cpo) || (t.cpo.IsZero() && a.has(party.RoleCPO))
}

// ListTerminals returns a page of the terminals the actor may see.
func (s *Service) ListTerminals(ctx context.Context, a Actor, p ocpi.PageRequest) ([]json.RawMessage, ocpi.Page, error) {
	if !a.has(party.RolePTP) && !a.has(party.RoleCPO) {
		return nil, ocpi.Page{}, errNotPayments()
	}
	var conds []string
	var args []any
	if ptps := a.parties(party.RolePTP); len(ptps) > 0 {
		conds = append(conds, partyCond("ptp", ptps, &args))
	}
	if cpos := a.parties(party.RoleCPO); len(cpos) > 0 {
		conds = append(conds, partyCond("cpo", cpos, &args), "cpo_country_code = ''")
	}
	l := store.List{Table: "terminals", Columns: "pk, last_updated, body", Where: []string{"(" + strings.Join(conds, " OR ") + ")"}, Args: args}.WithPage(p)
	return store.Documents(ctx, s.db.Read(), l)
}

// partyCond is a condition matching rows whose {prefix}_country_code and
// {prefix}_party_id are one of the parties; its arguments are appended.
func partyCond(prefix string, parties []Party, args *[]any) string {
	var ors []string
	for _, p := range parties {
		*args = append(*args, ocpi.Key(p.CountryCode), ocpi.Key(p.PartyID))
		n := len(*args)
		ors = append(ors, fmt.Sprintf("(%s_country_code = $%d AND %s_party_id = $%d)", prefix, n-1, prefix, n))
	}
	return "(" + strings.Join(ors, " OR ") + ")"
}

// Object keys of the payments pushes (one ordered queue each, per platform).
func customerTerminalKey(id string) string { return hub.ObjectKey("CPO-TERMINAL", id) }
func ptpTerminalKey(id string) string      { return hub.ObjectKey("PTP-TERMINAL", id) }
func adviceKey(ptp Party, id string) string {
	return hub.ObjectKey("CPO-FAC", ptp.CountryCode, ptp.PartyID, id)
}

func cloneObject(o ocpi.Object) ocpi.Object {
	b, err := ocpi.MarshalObject(o)
	if err != nil {
		return ocpi.Object{}
	}
	out, err := ocpi.ParseObject(b)
	if err != nil {
		return ocpi.Object{}
	}
	return out
}

// sameJSON compares a stored body (PostgreSQL renders JSONB with its own
// spacing and key order) with a canonical one.
func sameJSON(stored, canon []byte) bool {
	o, err := ocpi.ParseObject(stored)
	if err != nil {
		return false
	}
	b, err := ocpi.MarshalObject(o)
	return err == nil && string(b) == string(canon)
}

// printable returns s for a message: at most 40 characters, printable
// ASCII only.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 40; i++ {
		if s[i] >= 0x20 && s[i] <= 0x7e {
			b.WriteByte(s[i])
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}
