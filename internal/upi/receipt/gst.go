// Package receipt is the receipt of a UPI charging payment as a document: the receipt, its GST tax invoice
// and credit notes (the CGST rules they follow), and their delivery by e-mail.
package receipt

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/pg"
)

// GSTConfig makes every receipt a GST tax invoice of the hub operator, who
// takes the driver's payment as its eMSP and so supplies the charging
// service. Empty GSTIN: receipts are plain receipts.
//
// What a tax invoice shows follows the CGST Rules, 2017, rule 46: the
// supplier's name, address and GSTIN (46(a)); a consecutive serial number of
// at most 16 characters (letters, digits, "-" and "/"), unique for the
// financial year (46(b)); the date of issue (46(c)); the SAC of the service
// (46(g)) and its description (46(h)); the quantity (46(i), the energy in
// kWh); the total and the taxable value (46(j), (k)); the rates and amounts
// of central and state tax, or of integrated tax (46(l), (m)); the place of
// supply with the name of the state (46(n)); that tax is not payable on
// reverse charge (46(p)). The recipient is an unregistered driver: 46(e)
// asks for their name and address only above ₹50,000, more than a charging
// payment may be (Config.MaxPaise). The signature of 46(q) is not required of
// an electronic invoice (rule 46, third proviso). A correction is a credit
// note (CGST Act s. 34, CGST Rules rule 53): its own consecutive series, the
// number and date of the invoice it corrects (53(1)(f)), and the taxable
// value, rate and tax it credits (53(1)(g)).
//
// Decisions where the rules leave the hub a choice:
//   - The service is "battery charging service for electric vehicles",
//     SAC 998714 by default: the Karnataka Authority for Advance Ruling
//     (Chamundeshwari Electricity Supply Corp., 2023) held EV charging a
//     service under SAC 998714 taxed at 18%, following the Ministry of
//     Power's 2018 clarification that it is not a sale of electricity.
//   - The place of supply is the state of the charging location (the CDR
//     location's state, by name or GST state code), where the driver
//     receives the service; when the CDR names no state it is the
//     supplier's own state (IGST Act s. 12(2)(b)(ii): the supplier's
//     location when the recipient's address is not on record). The same
//     state as the GSTIN's: CGST + SGST; another: IGST.
//   - The taxable value and the tax come from the CDR's total_cost:
//     excl_vat is the taxable value and incl_vat − excl_vat the tax. A CDR
//     with excl_vat only is taken as tax-inclusive at Rate (default 18%),
//     since that amount is what the driver was charged.
//   - The tax is split between CGST and SGST with the odd paisa, if any, in
//     CGST. The printed rate is the standard rate nearest the one the CDR's
//     amounts imply (within 0.1 point), else that rate to two decimals.
//   - Numbers are Prefix/YYYY/NNNNNNN ("INV/2627/0000042": the financial
//     year 2026-27, which runs from 1 April in IST); credit notes use
//     CreditPrefix. A prefix has 1–3 characters so a number keeps within 16.
type GSTConfig struct {
	// SupplierName and SupplierAddress are the operator's legal name and
	// registered address.
	SupplierName    string
	SupplierAddress string
	// GSTIN is the operator's GST identification number; its first two
	// digits are the supplier's state code.
	GSTIN string
	// SAC is the service accounting code (default 998714).
	SAC string
	// Rate is the GST rate in percent applied to CDRs without incl_vat
	// (default 18).
	Rate string
	// Prefix and CreditPrefix start invoice and credit note numbers
	// (defaults INV and CRN).
	Prefix, CreditPrefix string
}

// DefaultSAC is the service accounting code of EV charging (see GSTConfig).
const DefaultSAC = "998714"

// Enabled reports whether receipts are tax invoices.
func (c GSTConfig) Enabled() bool { return c.GSTIN != "" }

func (c GSTConfig) WithDefaults() GSTConfig {
	if c.SAC == "" {
		c.SAC = DefaultSAC
	}
	if c.Rate == "" {
		c.Rate = "18"
	}
	if c.Prefix == "" {
		c.Prefix = "INV"
	}
	if c.CreditPrefix == "" {
		c.CreditPrefix = "CRN"
	}
	c.GSTIN = strings.ToUpper(strings.TrimSpace(c.GSTIN))
	return c
}

// Check validates the settings; an error names the setting.
func (c GSTConfig) Check() error {
	if !c.Enabled() {
		return nil
	}
	c = c.WithDefaults()
	if strings.TrimSpace(c.SupplierName) == "" {
		return ocpi.Invalid("gst_supplier_name", "is required with a GSTIN")
	}
	if strings.TrimSpace(c.SupplierAddress) == "" {
		return ocpi.Invalid("gst_supplier_address", "is required with a GSTIN")
	}
	if err := CheckGSTIN(c.GSTIN); err != nil {
		return err
	}
	if len(c.SAC) != 6 || !allDigits(c.SAC) || !strings.HasPrefix(c.SAC, "99") {
		return ocpi.Invalid("gst_sac", "must be a six-digit service accounting code (99xxxx)")
	}
	r, err := decimal.NewFromString(c.Rate)
	if err != nil || r.IsNegative() || r.GreaterThan(decimal.NewFromInt(40)) {
		return ocpi.Invalid("gst_rate", "must be a percentage from 0 to 40")
	}
	for _, p := range []struct{ field, v string }{{"gst_invoice_prefix", c.Prefix}, {"gst_credit_prefix", c.CreditPrefix}} {
		if len(p.v) < 1 || len(p.v) > 3 || !isAlnumUpper(p.v) {
			return ocpi.Invalid(p.field, "must be 1 to 3 upper-case letters or digits")
		}
	}
	if c.Prefix == c.CreditPrefix {
		return ocpi.Invalid("gst_credit_prefix", "must differ from the invoice prefix")
	}
	return nil
}

// gstinAlphabet gives each GSTIN character its value for the check digit.
const gstinAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"

// CheckGSTIN validates a GSTIN: 15 characters — the state code (two
// digits, a known state), the holder's PAN (five letters, four digits, a
// letter), the registration's entity number, "Z", and the check character
// (the modulus-36 checksum of the first fourteen, weights 1 and 2
// alternating, as the GST Network computes it).
func CheckGSTIN(g string) error {
	bad := func(issue string) error { return ocpi.Invalid("gstin", issue) }
	if len(g) != 15 {
		return bad("must have 15 characters")
	}
	if _, ok := gstStates[g[:2]]; !ok {
		return bad("does not start with a GST state code")
	}
	pan := g[2:12]
	if !isUpperLetters(pan[:5]) || !allDigits(pan[5:9]) || !isUpperLetters(pan[9:]) {
		return bad("characters 3–12 are not a PAN (AAAAA9999A)")
	}
	if !isAlnumUpper(g[12:13]) || g[12] == '0' || g[13] != 'Z' {
		return bad("characters 13–14 must be an entity number (1–9, A–Z) and Z")
	}
	if want := gstinCheck(g[:14]); g[14] != want {
		return bad(fmt.Sprintf("check character is %c, want %c", g[14], want))
	}
	return nil
}

// gstinCheck computes the check character of a GSTIN's first 14
// characters.
func gstinCheck(s string) byte {
	sum := 0
	for i := 0; i < len(s); i++ {
		v := strings.IndexByte(gstinAlphabet, s[i])
		p := v * (1 + i%2)
		sum += p/36 + p%36
	}
	return gstinAlphabet[(36-sum%36)%36]
}

// gstStates are the GST state codes and the names printed with them.
var gstStates = map[string]string{
	"01": "Jammu and Kashmir", "02": "Himachal Pradesh", "03": "Punjab", "04": "Chandigarh", "05": "Uttarakhand",
	"06": "Haryana", "07": "Delhi", "08": "Rajasthan", "09": "Uttar Pradesh", "10": "Bihar", "11": "Sikkim",
	"12": "Arunachal Pradesh", "13": "Nagaland", "14": "Manipur", "15": "Mizoram", "16": "Tripura", "17": "Meghalaya",
	"18": "Assam", "19": "West Bengal", "20": "Jharkhand", "21": "Odisha", "22": "Chhattisgarh", "23": "Madhya Pradesh",
	"24": "Gujarat", "26": "Dadra and Nagar Haveli and Daman and Diu", "27": "Maharashtra", "29": "Karnataka", "30": "Goa",
	"31": "Lakshadweep", "32": "Kerala", "33": "Tamil Nadu", "34": "Puducherry", "35": "Andaman and Nicobar Islands",
	"36": "Telangana", "37": "Andhra Pradesh", "38": "Ladakh", "97": "Other Territory",
}

// StateCode finds the GST state code of a state named in a CDR: its code
// ("29"), or its name in any case ("Karnataka"), "NCT of Delhi" and
// "Orissa" included. "" when unknown.
func StateCode(state string) string {
	s := strings.ToLower(strings.Join(strings.Fields(state), " "))
	if s == "" {
		return ""
	}
	if _, ok := gstStates[s]; ok {
		return s
	}
	switch s {
	case "nct of delhi", "new delhi":
		return "07"
	case "orissa":
		return "21"
	case "pondicherry":
		return "34"
	}
	s = strings.ReplaceAll(s, "&", "and")
	for code, name := range gstStates {
		if strings.ToLower(name) == s {
			return code
		}
	}
	return ""
}

// Kinds of GST documents.
const (
	KindTaxInvoice = "tax_invoice"
	KindCreditNote = "credit_note"
)

// TaxInvoice is a GST tax invoice, or a credit note against one, as
// issued (see GSTConfig for what it holds and why). Amounts are decimal
// rupees; TaxableValue + CGST + SGST + IGST = Total.
type TaxInvoice struct {
	Kind   string `json:"kind"`
	Number string `json:"number"`
	// Date is the date of issue in IST (YYYY-MM-DD).
	Date string `json:"date"`
	// FinancialYear is "2026-27".
	FinancialYear   string `json:"financial_year"`
	SupplierName    string `json:"supplier_name"`
	SupplierAddress string `json:"supplier_address"`
	SupplierGSTIN   string `json:"supplier_gstin"`
	SupplierState   string `json:"supplier_state"`
	// PlaceOfSupply is the state's name and PlaceOfSupplyCode its code.
	PlaceOfSupply     string `json:"place_of_supply"`
	PlaceOfSupplyCode string `json:"place_of_supply_code"`
	InterState        bool   `json:"inter_state"`
	SAC               string `json:"sac"`
	Description       string `json:"description"`
	// QuantityKWh is the energy charged.
	QuantityKWh  string `json:"quantity_kwh"`
	TaxableValue string `json:"taxable_value"`
	// Rate is the GST rate in percent; CGSTRate and SGSTRate are half of
	// it within a state, IGSTRate all of it across states.
	Rate          string `json:"rate"`
	CGSTRate      string `json:"cgst_rate,omitempty"`
	SGSTRate      string `json:"sgst_rate,omitempty"`
	IGSTRate      string `json:"igst_rate,omitempty"`
	CGST          string `json:"cgst"`
	SGST          string `json:"sgst"`
	IGST          string `json:"igst"`
	Total         string `json:"total"`
	ReverseCharge bool   `json:"reverse_charge"`
	// OriginalNumber and OriginalDate name the invoice a credit note
	// corrects; Reason says why.
	OriginalNumber string `json:"original_number,omitempty"`
	OriginalDate   string `json:"original_date,omitempty"`
	Reason         string `json:"reason,omitempty"`
}

// Paise returns an amount of the document in paise.
func (t *TaxInvoice) Paise(rupees string) int64 {
	p, _ := pg.ParseRupees(rupees)
	return p
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isUpperLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'A' || s[i] > 'Z' {
			return false
		}
	}
	return s != ""
}

func isAlnumUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < 'A' || s[i] > 'Z') && (s[i] < '0' || s[i] > '9') {
			return false
		}
	}
	return s != ""
}

// TaxLines are the tax invoice of a receipt in lines of text, as the
// e-mail shows it: the same numbers as the PDF and the page. None for a
// plain receipt.
func (r *Receipt) TaxLines() []string {
	t := r.TaxInvoice
	if t == nil {
		return nil
	}
	out := []string{
		"Tax invoice " + t.Number + " of " + t.Date,
		"Supplier:  " + t.SupplierName + ", " + t.SupplierAddress,
		"GSTIN:     " + t.SupplierGSTIN + " (" + t.SupplierState + ")",
		"Place of supply: " + t.PlaceOfSupply + " (" + t.PlaceOfSupplyCode + ")",
		"SAC:       " + t.SAC + " " + t.Description,
		"Taxable value: " + r.Display(t.TaxableValue),
	}
	if t.InterState {
		out = append(out, "IGST @ "+t.IGSTRate+"%: "+r.Display(t.IGST))
	} else {
		out = append(out, "CGST @ "+t.CGSTRate+"%: "+r.Display(t.CGST), "SGST @ "+t.SGSTRate+"%: "+r.Display(t.SGST))
	}
	out = append(out, "Invoice total: "+r.Display(t.Total), "")
	for _, c := range r.CreditNotes {
		out = append(out, "Credit note "+c.Number+" of "+c.Date+": "+r.Display(c.Total)+" credited", "")
	}
	return out
}

// StateName is the name of the state with a GST state code ("29":
// "Karnataka"); "" when the code is unknown.
func StateName(code string) string { return gstStates[code] }
