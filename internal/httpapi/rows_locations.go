package httpapi

import (
	"strings"

	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/openapi"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// locationRows are locations and tariffs: the CPO receivers (a CPO pushes
// here) and the eMSP directory (eMSPs and NSPs pull here), the public
// driver search and the operator's pricing. The short forms without
// {cc}/{pid} are the seed's; they take the caller's only CPO party.
func (s *Server) locationRows() route.Module {
	const (
		cpoLoc = "/ocpi/2.2.1/cpo/locations/{cc}/{pid}/{location_id}"
		cpoTar = "/ocpi/2.2.1/cpo/tariffs/{cc}/{pid}/{tariff_id}"
	)
	party := []openapi.Parameter{
		{Name: "cc", In: "path", Description: "country code of the CPO (one of the caller's parties)", Schema: openapi.Schema{"type": "string", "minLength": 2, "maxLength": 2}},
		{Name: "pid", In: "path", Description: "party id of the CPO", Schema: openapi.Schema{"type": "string", "minLength": 3, "maxLength": 3}},
	}
	var rows []route.Row
	add := func(pattern string, h route.Func, sch *route.DataSchema, d route.Doc) {
		needs, l := route.NeedLocations, route.Listing{Identifier: "locations", Role: ocpi.InterfaceReceiver, Path: "/ocpi/2.2.1/cpo/locations"}
		if strings.Contains(pattern, "/emsp/") {
			l = route.Listing{Identifier: "locations", Role: ocpi.InterfaceSender, Path: "/ocpi/2.2.1/emsp/locations"}
		}
		if strings.Contains(pattern, "tariffs") {
			needs, l.Identifier, l.Path = route.NeedTariffs, "tariffs", strings.Replace(l.Path, "locations", "tariffs", 1)
		}
		rows = append(rows, route.Row{Pattern: pattern, Access: route.Platform, Handler: h, Needs: needs, Listed: l, Schema: sch, Doc: d})
	}
	// The receiver at each depth (Location, EVSE, Connector), with and
	// without the party in the URL.
	for _, level := range []struct {
		suffix, what, schema string
		obj                  any
	}{
		{"", "a Location", "Location", ocpi.Location{}},
		{"/{evse_uid}", "an EVSE", "EVSE", ocpi.EVSE{}},
		{"/{evse_uid}/{connector_id}", "a Connector", "Connector", ocpi.Connector{}},
	} {
		for _, base := range []string{cpoLoc, "/ocpi/2.2.1/cpo/locations/{location_id}"} {
			if base != cpoLoc && level.suffix != "" {
				continue // the short form exists for Locations only
			}
			params := party
			if base != cpoLoc {
				params = nil
			}
			p := base + level.suffix
			short := ""
			if base != cpoLoc {
				short = " The short form takes the caller's only CPO party."
			}
			add("GET "+p, s.handleCPOLocationGet, route.Data(level.schema), route.Doc{Summary: "Read the hub's copy of " + level.what + " the CPO pushed", Data: level.obj, Params: params,
				Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc", Description: "A CPO checks what the hub stored." + short})
			add("PUT "+p, s.handleCPOLocationPut, route.Data(""), route.Doc{Summary: "Push " + level.what + " (created: 201, replaced: 200)", Request: level.obj, Params: params, Stored: true,
				Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc",
				Description: "The hub validates, stores and broadcasts it to every connected eMSP with a locations receiver." + short})
			add("PATCH "+p, s.handleCPOLocationPatch, route.Data(""), route.Doc{Summary: "Update fields of " + level.what + " (last_updated required)", Request: map[string]any{}, Params: params,
				Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc", Description: "OCPI merge rules: nested EVSEs and connectors by id." + short})
			add("DELETE "+p, s.handleCPOLocationDelete, route.Data(""), route.Doc{Summary: "Refused: locations, EVSEs and connectors are never deleted (PUT the EVSE with status REMOVED)", Params: params,
				Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc", Errors: []int{405}})
		}
	}
	directory := "Locations of every CPO connected to the hub, published ones only (publish_allowed_to honoured); OCPI-to-* narrows to one CPO."
	add("GET /ocpi/2.2.1/emsp/locations", s.handleEMSPLocations, route.Data("[]Location"), route.Doc{Summary: "The directory: every CPO's locations, paged", Description: directory,
		Data: []ocpi.Location{}, Paged: true, Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc"})
	add("GET /ocpi/2.2.1/emsp/locations/{location_id}", s.handleEMSPLocation, route.Data("Location"), route.Doc{Summary: "One Location of the directory", Data: ocpi.Location{}, Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc"})
	add("GET /ocpi/2.2.1/emsp/locations/{location_id}/{evse_uid}", s.handleEMSPLocation, route.Data("EVSE"), route.Doc{Summary: "One EVSE of the directory", Data: ocpi.EVSE{}, Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc"})
	add("GET /ocpi/2.2.1/emsp/locations/{location_id}/{evse_uid}/{connector_id}", s.handleEMSPLocation, route.Data("Connector"), route.Doc{Summary: "One Connector of the directory", Data: ocpi.Connector{}, Relayed: true, Tag: "locations", Spec: "mod_locations.asciidoc"})
	for _, p := range []string{cpoTar, "/ocpi/2.2.1/cpo/tariffs/{tariff_id}"} {
		params := party
		if p != cpoTar {
			params = nil
		}
		add("GET "+p, s.handleCPOTariffGet, route.Data("Tariff"), route.Doc{Summary: "Read the hub's copy of a Tariff", Data: ocpi.Tariff{}, Params: params, Relayed: true, Tag: "tariffs", Spec: "mod_tariffs.asciidoc"})
		add("PUT "+p, s.handleCPOTariffPut, route.Data(""), route.Doc{Summary: "Push a Tariff (created: 201, replaced: 200)", Request: ocpi.Tariff{}, Params: params, Stored: true, Relayed: true, Tag: "tariffs", Spec: "mod_tariffs.asciidoc"})
		add("DELETE "+p, s.handleCPOTariffDelete, route.Data(""), route.Doc{Summary: "Delete a Tariff", Params: params, Relayed: true, Tag: "tariffs", Spec: "mod_tariffs.asciidoc"})
		add("PATCH "+p, s.handleCPOTariffPatch, route.Data(""), route.Doc{Summary: "Update fields of a Tariff (last_updated required)", Request: map[string]any{}, Params: params, Relayed: true, Tag: "tariffs", Spec: "mod_tariffs.asciidoc"})
	}
	add("GET /ocpi/2.2.1/emsp/tariffs", s.handleEMSPTariffs, route.Data("[]Tariff"), route.Doc{Summary: "Every CPO's tariffs, paged", Data: []ocpi.Tariff{}, Paged: true, Relayed: true, Tag: "tariffs", Spec: "mod_tariffs.asciidoc"})
	add("GET /ocpi/2.2.1/emsp/tariffs/{tariff_id}", s.handleEMSPTariff, route.Data("Tariff"), route.Doc{Summary: "One Tariff", Data: ocpi.Tariff{}, Relayed: true, Tag: "tariffs", Spec: "mod_tariffs.asciidoc"})
	rows = append(rows, route.Row{Pattern: "POST /admin/tariffs/price", Access: route.Admin, Handler: s.handleAdminTariffPrice, Options: []route.Option{route.WithoutReplay}, Doc: route.Doc{
		Summary: "Price a CDR or a session with the hub's cost engine",
		Description: "tariffs (2.2.1, or 2.1.1 without country_code) price the cdr or session; without them a CDR is priced from the tariffs it carries. " +
			"The answer is the engine's total_cost, the cost per dimension and price component, and the difference to the object's own total_cost; explain adds the engine's reasons.",
		Request: priceRequest{}, Data: &tariff.Report{}, Tag: "tariffs"}})

	num := openapi.Schema{"type": "number"}
	rows = append(rows, route.Row{Pattern: "GET /api/locations", Access: route.Public, Handler: s.handleSearch, Needs: route.NeedLocations, Doc: route.Doc{
		Summary:     "Driver search: published locations near a point, nearest first (no token)",
		Description: "Only locations with an EVSE that is not REMOVED are found. format=geojson (or Accept: application/geo+json) answers a GeoJSON FeatureCollection whose properties are the Location objects plus distance_m.",
		Tag:         "search",
		Data:        []ocpi.Location{},
		Params: []openapi.Parameter{
			{Name: "lat", In: "query", Required: true, Description: "latitude, decimal degrees", Schema: num},
			{Name: "lon", In: "query", Required: true, Description: "longitude, decimal degrees", Schema: num},
			{Name: "radius", In: "query", Description: "metres (default 5000, at most 50000)", Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": 50000}},
			{Name: "connector_type", In: "query", Description: "connector standard; repeatable or comma-separated", Schema: openapi.Schema{"type": "string"}},
			{Name: "min_power", In: "query", Description: "kW", Schema: num},
			{Name: "available", In: "query", Description: "only locations with an AVAILABLE EVSE", Schema: openapi.Schema{"type": "boolean"}},
			{Name: "limit", In: "query", Schema: openapi.Schema{"type": "integer", "minimum": 1, "maximum": 100}},
			{Name: "format", In: "query", Schema: openapi.Schema{"enum": []any{"geojson"}}},
		},
		Also: map[string]openapi.Schema{"application/geo+json": {
			"type": "object", "required": []any{"type", "features"},
			"properties": openapi.Schema{
				"type":     openapi.Schema{"const": "FeatureCollection"},
				"features": openapi.Schema{"type": "array", "items": openapi.Schema{"type": "object", "required": []any{"type", "geometry", "properties"}}},
			},
		}},
	}})
	return route.Module{
		Tag: openapi.Tag{Name: "locations", Description: "Locations, EVSEs and connectors: CPOs push to the receiver, eMSPs pull the directory.",
			ExternalDocs: &openapi.ExternalDocs{URL: "https://github.com/ocpi/ocpi/blob/2.2.1/mod_locations.asciidoc"}},
		Rows: rows,
		Schemas: func(s *openapi.Schemas) {
			enum := func(v []string) openapi.Schema { return openapi.Schema{"enum": route.AnyOf(v)} }
			items := func(v []string) openapi.Schema {
				return openapi.Schema{"items": openapi.Schema{"type": "string", "enum": route.AnyOf(v)}}
			}
			s.Field(ocpi.Location{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(ocpi.Location{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(ocpi.Location{}, "id", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.Location{}, "parking_type", enum(ocpi.ParkingTypes))
			s.Field(ocpi.Location{}, "facilities", items(ocpi.Facilities))
			s.Field(ocpi.Location{}, "country", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(ocpi.EVSE{}, "uid", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.EVSE{}, "status", enum(ocpi.EVSEStatuses))
			s.Field(ocpi.EVSE{}, "capabilities", items(ocpi.Capabilities))
			s.Field(ocpi.EVSE{}, "parking_restrictions", items(ocpi.ParkingRestrictions))
			s.Field(ocpi.Connector{}, "id", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.Connector{}, "standard", enum(ocpi.ConnectorTypes))
			s.Field(ocpi.Connector{}, "format", enum(ocpi.ConnectorFormats))
			s.Field(ocpi.Connector{}, "power_type", enum(ocpi.PowerTypes))
			s.Field(ocpi.GeoLocation{}, "latitude", openapi.Schema{"pattern": `^-?[0-9]{1,2}\.[0-9]{5,7}$`})
			s.Field(ocpi.GeoLocation{}, "longitude", openapi.Schema{"pattern": `^-?[0-9]{1,3}\.[0-9]{5,7}$`})
			s.Field(ocpi.Tariff{}, "country_code", openapi.Schema{"minLength": 2, "maxLength": 2})
			s.Field(ocpi.Tariff{}, "party_id", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(ocpi.Tariff{}, "id", openapi.Schema{"maxLength": 36})
			s.Field(ocpi.Tariff{}, "currency", openapi.Schema{"minLength": 3, "maxLength": 3})
			s.Field(ocpi.Tariff{}, "type", enum(ocpi.TariffTypes))
			s.Field(ocpi.PriceComponent{}, "type", enum(ocpi.TariffDimensionTypes))
		},
	}
}
