// Command ocpihub-dev is ocpihub for development and demonstration: every
// command of ocpihub, with the payment gateway and SMS simulators standing in
// when --dev (or the sandbox) has no real gateway configured, and
// `ocpihub-dev demo`, which runs the hub with simulated partners and plays
// the stories. Production deploys cmd/ocpihub, which has none of this.
package main

import (
	"github.com/ocpihub/ocpihub/internal/cli"
	"github.com/ocpihub/ocpihub/internal/devgw"
)

// program is ocpihub-dev's command line (the tests run it too).
var program = cli.Program{
	Name:       "ocpihub-dev",
	Simulators: devgw.Simulators(),
	Commands: []cli.Command{
		{Name: "demo", Usage: "demo [--keep-running]  run the hub with simulated partners and play the stories", Run: cmdDemo},
	},
}

func main() {
	program.Main()
}
