package ident

import (
	"fmt"
	"strings"
)

// Notation is how ocpihub writes a party everywhere it prints one (commands,
// console, logs, messages, metric labels): COUNTRY_CODE/PARTY_ID in upper
// case, e.g. NL/ACM. Where the role matters it is written before it, as
// "CPO NL/ACM".
func Notation(cc, pid string) string { return strings.ToUpper(cc) + "/" + strings.ToUpper(pid) }

// ParseParty reads a party written as CC/PID, or in one of the forms other
// tools use: CC-PID, CC*PID, CC PID or CCPID. It checks the lengths (two
// letters, three characters).
func ParseParty(s string) (cc, pid string, err error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	if i := strings.IndexAny(t, "/-* "); i >= 0 {
		cc, pid = strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:])
	} else if len(t) == 5 {
		cc, pid = t[:2], t[2:]
	}
	if len(cc) != 2 || !isLetters(cc) || len(pid) != 3 || !isAlnum(pid) {
		return "", "", fmt.Errorf("want a party as COUNTRY_CODE/PARTY_ID, e.g. NL/ACM (CC-PID and CC*PID are read too), not %q", s)
	}
	return cc, pid, nil
}

// ParsePartyRef reads a party with its role: ROLE/CC/PID or "ROLE CC/PID",
// the party part in any form ParseParty reads.
func ParsePartyRef(s string) (PartyRef, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexAny(t, "/ ")
	if i < 0 {
		return PartyRef{}, fmt.Errorf("want ROLE/COUNTRY_CODE/PARTY_ID, e.g. CPO/NL/ACM, not %q", s)
	}
	role := Role(strings.ToUpper(t[:i]))
	switch role {
	case RoleCPO, RoleEMSP, RoleHUB, RoleNAP, RoleNSP, RoleOTHER, RoleSCSP, RolePTP:
	default:
		return PartyRef{}, fmt.Errorf("want ROLE/COUNTRY_CODE/PARTY_ID with ROLE one of CPO, EMSP, HUB, NAP, NSP, OTHER, SCSP, PTP, not %q", s)
	}
	cc, pid, err := ParseParty(t[i+1:])
	if err != nil {
		return PartyRef{}, fmt.Errorf("want ROLE/COUNTRY_CODE/PARTY_ID, e.g. CPO/NL/ACM, not %q", s)
	}
	return PartyRef{Role: role, CountryCode: cc, PartyID: pid}, nil
}

func isLetters(s string) bool {
	for _, r := range s {
		if r < 'A' || r > 'Z' {
			return false
		}
	}
	return true
}

func isAlnum(s string) bool {
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}
