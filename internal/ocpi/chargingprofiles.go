package ocpi

// ChargingProfileResponse is the Receiver's immediate answer to a charging
// profile request (chargingprofiles.md §3).
type ChargingProfileResponse struct {
	Result  string `json:"result"`
	Timeout *int   `json:"timeout"`
}

// SetChargingProfile is the body of a profile PUT.
type SetChargingProfile struct {
	ChargingProfile *ChargingProfile `json:"charging_profile"`
	ResponseURL     string           `json:"response_url"`
}

// ActiveChargingProfileResult answers a GET of the active profile.
type ActiveChargingProfileResult struct {
	Result  string                 `json:"result"`
	Profile *ActiveChargingProfile `json:"profile,omitempty"`
}

// ChargingProfileResult answers a profile PUT; ClearProfileResult a DELETE.
// They have the same shape.
type ChargingProfileResult struct {
	Result string `json:"result"`
}

// ActiveChargingProfile is the profile a charger computed, from a moment on.
type ActiveChargingProfile struct {
	StartDateTime   DateTime         `json:"start_date_time"`
	ChargingProfile *ChargingProfile `json:"charging_profile"`
}

// ChargingProfile is a list of upper limits over time.
type ChargingProfile struct {
	StartDateTime         *DateTime               `json:"start_date_time,omitempty"`
	Duration              *int                    `json:"duration,omitempty"`
	ChargingRateUnit      string                  `json:"charging_rate_unit"`
	MinChargingRate       Number                  `json:"min_charging_rate,omitzero"`
	ChargingProfilePeriod []ChargingProfilePeriod `json:"charging_profile_period,omitempty"`
}

// ChargingProfilePeriod is one limit from a moment relative to the profile's
// start.
type ChargingProfilePeriod struct {
	StartPeriod *int   `json:"start_period"`
	Limit       Number `json:"limit"`
}

// The ChargingProfiles enumerations (chargingprofiles.md §4).
var (
	ChargingRateUnits            = []string{"W", "A"}
	ChargingProfileResponseTypes = []string{"ACCEPTED", "NOT_SUPPORTED", "REJECTED", "TOO_OFTEN", "UNKNOWN_SESSION"}
	ChargingProfileResultTypes   = []string{"ACCEPTED", "REJECTED", "UNKNOWN"}
)

// Check validates a ChargingProfileResponse.
func (r *ChargingProfileResponse) Check(c *Check) {
	c.Enum("result", r.Result, ChargingProfileResponseTypes, true)
	if c.Required("timeout", r.Timeout != nil) && *r.Timeout < 0 {
		c.Fail("timeout", "must not be negative")
	}
}

// Check validates a SetChargingProfile.
func (s *SetChargingProfile) Check(c *Check) {
	if c.Required("charging_profile", s.ChargingProfile != nil) {
		sub := c.Sub("charging_profile")
		s.ChargingProfile.Check(sub)
		c.Merge(sub)
	}
	c.URL("response_url", s.ResponseURL, true)
}

// Check validates an ActiveChargingProfileResult.
func (r *ActiveChargingProfileResult) Check(c *Check) {
	c.Enum("result", r.Result, ChargingProfileResultTypes, true)
	if r.Profile != nil {
		sub := c.Sub("profile")
		r.Profile.Check(sub)
		c.Merge(sub)
	}
}

// Check validates a ChargingProfileResult or ClearProfileResult.
func (r *ChargingProfileResult) Check(c *Check) {
	c.Enum("result", r.Result, ChargingProfileResultTypes, true)
}

// Check validates an ActiveChargingProfile.
func (a *ActiveChargingProfile) Check(c *Check) {
	c.DateTime("start_date_time", a.StartDateTime, true)
	if c.Required("charging_profile", a.ChargingProfile != nil) {
		sub := c.Sub("charging_profile")
		a.ChargingProfile.Check(sub)
		c.Merge(sub)
	}
}

// Check validates a ChargingProfile.
func (p *ChargingProfile) Check(c *Check) {
	if p.Duration != nil && *p.Duration < 0 {
		c.Fail("duration", "must not be negative")
	}
	c.Enum("charging_rate_unit", p.ChargingRateUnit, ChargingRateUnits, true)
	if p.MinChargingRate.Valid() {
		checkRate(c, "min_charging_rate", p.MinChargingRate)
	}
	last := -1
	for i, period := range p.ChargingProfilePeriod {
		sub := c.Index("charging_profile_period", i)
		if sub.Required("start_period", period.StartPeriod != nil) {
			switch {
			case *period.StartPeriod < 0:
				sub.Fail("start_period", "must not be negative")
			case *period.StartPeriod <= last:
				sub.Fail("start_period", "must be later than the previous period's")
			default:
				last = *period.StartPeriod
			}
		}
		if sub.Required("limit", period.Limit.Valid()) {
			checkRate(sub, "limit", period.Limit)
		}
		c.Merge(sub)
	}
}

// checkRate checks a charging rate: not negative, at most one decimal.
func checkRate(c *Check, field string, n Number) {
	d := n.Decimal()
	switch {
	case d.IsNegative():
		c.Fail(field, "must not be negative")
	case !d.Equal(d.Truncate(1)):
		c.Fail(field, "may have at most one decimal")
	}
}

// Charging profile operations, as the hub stores them with commands.
const (
	ProfileSet   = "SET_CHARGING_PROFILE"
	ProfileGet   = "GET_ACTIVE_CHARGING_PROFILE"
	ProfileClear = "CLEAR_PROFILE"
)
