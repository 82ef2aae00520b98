package console

import (
	"net/http"
	"time"
)

// componentsView is the gallery of the console's shared parts, with sample
// data: how a module's page will look before its data exists.
type componentsView struct {
	Map      MapView
	Sessions ChartView
	Energy   ChartView
	Outcomes ChartView
	Statuses []string
	Empty    MapView
}

// samplePoints are charging locations in Indian cities (sample data).
var samplePoints = []MapPoint{
	{ID: "LOC-DEL-1", Name: "Connaught Place", Status: "AVAILABLE", Latitude: "28.631451", Longitude: "77.216667", Detail: "New Delhi"},
	{ID: "LOC-DEL-2", Name: "Aerocity", Status: "CHARGING", Latitude: "28.548764", Longitude: "77.121262", Detail: "New Delhi"},
	{ID: "LOC-BOM-1", Name: "Bandra Kurla Complex", Status: "CHARGING", Latitude: "19.066245", Longitude: "72.868393", Detail: "Mumbai"},
	{ID: "LOC-PNQ-1", Name: "Hinjewadi Phase 1", Status: "OUTOFORDER", Latitude: "18.591361", Longitude: "73.738930", Detail: "Pune"},
	{ID: "LOC-BLR-1", Name: "Koramangala", Status: "AVAILABLE", Latitude: "12.935242", Longitude: "77.624480", Detail: "Bengaluru"},
	{ID: "LOC-BLR-2", Name: "Whitefield", Status: "BLOCKED", Latitude: "12.969800", Longitude: "77.749954", Detail: "Bengaluru"},
	{ID: "LOC-MAA-1", Name: "T. Nagar", Status: "AVAILABLE", Latitude: "13.041800", Longitude: "80.233900", Detail: "Chennai"},
	{ID: "LOC-HYD-1", Name: "HITEC City", Status: "INOPERATIVE", Latitude: "17.447340", Longitude: "78.376230", Detail: "Hyderabad"},
	{ID: "LOC-CCU-1", Name: "Salt Lake Sector V", Status: "AVAILABLE", Latitude: "22.572645", Longitude: "88.433512", Detail: "Kolkata"},
	{ID: "LOC-BAD", Name: "Missing coordinates", Status: "UNKNOWN", Latitude: "", Longitude: ""},
}

func (c *Console) componentPages() ([]Page, []Action) {
	return []Page{{
		Path: "/components", Title: "Components", Section: "Development", Nav: "Components", Template: "components", Dev: true,
		Load: func(r *http.Request) (any, error) {
			days := DailyLabels(c.clock.Now(), 14, time.UTC)
			return componentsView{
				Map: c.Map(samplePoints),
				Sessions: Chart{Title: "Sessions per day", Labels: days, Series: []Series{
					{Name: "Sessions", Values: []int64{12, 18, 15, 22, 30, 28, 9, 14, 25, 31, 27, 35, 40, 38}},
				}}.View(),
				Energy: Chart{Title: "Energy per day", Kind: "line", Unit: "kWh", Scale: 1000, Decimals: 1, Labels: days, Series: []Series{
					{Name: "AC", Values: []int64{81200, 95400, 90100, 120800, 150300, 141000, 60200, 88800, 130400, 151900, 140200, 170500, 190300, 185600}},
					{Name: "DC", Values: []int64{210500, 250100, 240800, 300200, 390700, 350400, 150900, 220300, 330800, 400100, 380500, 450200, 500900, 480300}},
				}}.View(),
				Outcomes: Chart{Title: "Payment outcomes", Kind: "stacked", Unit: "₹", Scale: 100, Decimals: 2, Labels: days[7:], Series: []Series{
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
