package guards

// DispatchMarker applies when the admission carries a tailUuid (the uuid of
// the transcript's last record at admission): that record must be on the
// active chain and at least one visible write (not of type system, with a
// message) must follow it (reference V5/V6). The transcript is append-only,
// so anything after the marker postdates admission — an ordering check immune
// to clock skew. Marker-less admissions fall through to Temporal; identified
// turns (Ownership) do not need it.
var DispatchMarker Guard[*Evidence] = Func("dispatch-marker", func(e *Evidence) string {
	t := e.Transcript
	if !t.Loaded || t.MarkerUUID == "" || identified(e) {
		return ""
	}
	if t.MarkerIdx < 0 {
		return "admission marker " + t.MarkerUUID + " is not on the active chain"
	}
	if !t.WroteAfter {
		return "no visible write after admission marker " + t.MarkerUUID
	}
	return ""
})
