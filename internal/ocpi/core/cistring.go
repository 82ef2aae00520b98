package core

import "strings"

// EqualCI compares two CiStrings.
func EqualCI(a, b string) bool { return strings.EqualFold(a, b) }

// Key returns the database key form of a CiString: upper case, so that ids
// differing only in case are the same object.
func Key(s string) string { return strings.ToUpper(s) }
