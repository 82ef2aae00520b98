//go:build !unix

package instance

// alive cannot tell on this system: every holder counts as alive and its
// leases only expire.
func alive(int) bool { return true }
