package console

import (
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/console/ui"
)

// componentsView is the gallery of the console's shared parts, with sample
// data: how a module's page will look before its data exists.
type componentsView struct {
	Map      ui.MapView
	Sessions ui.ChartView
	Energy   ui.ChartView
	Outcomes ui.ChartView
	Statuses []string
	Empty    ui.MapView
}

func (c *Console) componentPages() ([]ui.Page, []ui.Action) {
	return []ui.Page{{
		Path: "/components", Title: "Components", Section: "Development", Nav: "Components", Template: "components", Dev: true,
		Load: func(r *http.Request) (any, error) {
			days := ui.DailyLabels(c.clock.Now(), 14, time.UTC)
			return componentsView{
				Map: c.Map(ui.SamplePoints),
				Sessions: ui.Chart{Title: "Sessions per day", Labels: days, Series: []ui.Series{
					{Name: "Sessions", Values: []int64{12, 18, 15, 22, 30, 28, 9, 14, 25, 31, 27, 35, 40, 38}},
				}}.View(),
				Energy: ui.Chart{Title: "Energy per day", Kind: "line", Unit: "kWh", Scale: 1000, Decimals: 1, Labels: days, Series: []ui.Series{
					{Name: "AC", Values: []int64{81200, 95400, 90100, 120800, 150300, 141000, 60200, 88800, 130400, 151900, 140200, 170500, 190300, 185600}},
					{Name: "DC", Values: []int64{210500, 250100, 240800, 300200, 390700, 350400, 150900, 220300, 330800, 400100, 380500, 450200, 500900, 480300}},
				}}.View(),
				Outcomes: ui.Chart{Title: "Payment outcomes", Kind: "stacked", Unit: "₹", Scale: 100, Decimals: 2, Labels: days[7:], Series: []ui.Series{
					{Name: "Captured", Values: []int64{1250000, 1580050, 1720000, 1490025, 2010000, 2230075, 2150000}},
					{Name: "Refunded", Values: []int64{120000, 95000, 150050, 80000, 210000, 175000, 130000}},
					{Name: "Failed", Values: []int64{30000, 45000, 20000, 60000, 35000, 15000, 40000}},
				}}.View(),
				Statuses: []string{"CONNECTED", "OFFLINE", "SUSPENDED", "PENDING", "AVAILABLE", "CHARGING", "BLOCKED", "OUTOFORDER", "UNKNOWN", "discarded", "retryable"},
				Empty:    c.Map(nil),
			}, nil
		},
	}}, nil
}
