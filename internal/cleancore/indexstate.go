package cleancore

// IndexState is an entry's release state and first successor as the index reports them: a
// released object SAP marks deprecated is "deprecated".
func (e Entry) IndexState() (state, successor string) {
	state = e.State.String()
	if e.Deprecated && e.State == StateReleased {
		state = "deprecated"
	}
	if len(e.Successors) > 0 {
		successor = e.Successors[0].Name
	}
	return state, successor
}
