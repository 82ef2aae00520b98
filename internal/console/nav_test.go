package console

import "testing"

// TestActiveNav: the most specific navigation item that the page is, or
// is a sub-page of, is the one highlighted.
func TestActiveNav(t *testing.T) {
	t.Parallel()
	nav := []navSection{
		{Items: []navItem{{Label: "Overview", Path: "/"}}},
		{Name: "Payments", Items: []navItem{{Label: "UPI payments", Path: "/payments"}, {Label: "Refunds", Path: "/payments/refunds"},
			{Label: "Direct Payment", Path: "/direct-payments"}}},
	}
	for _, tc := range []struct{ current, want string }{
		{"/", "/"},
		{"/payments", "/payments"},
		{"/payments/attention", "/payments"},
		{"/payments/PAY-1", "/payments"},
		{"/payments/refunds", "/payments/refunds"},
		{"/payments/refunds/x", "/payments/refunds"},
		{"/payments-other", ""},
		{"/direct-payments/terminals", "/direct-payments"},
		{"/jobs", ""},
	} {
		if got := activeNav(nav, tc.current); got != tc.want {
			t.Errorf("activeNav(%q) = %q, want %q", tc.current, got, tc.want)
		}
	}
}
