// Command ocpihub is the OCPI hub: `ocpihub serve` runs it; the other
// commands act on its database (parties, QR codes, payments, migrations).
// It is the production binary: no simulator and no demo is in its
// dependency graph (deps_test.go checks); cmd/ocpihub-dev has them.
package main

import "github.com/ocpihub/ocpihub/internal/cli"

func main() {
	cli.Program{Name: "ocpihub"}.Main()
}
