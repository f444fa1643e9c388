package workflows

import (
	"go.temporal.io/sdk/testsuite"
)

// sendUpdate sends u to env's workflow through the same descriptor the API uses, so a test
// cannot send an argument the handler does not take; done gets the outcome (rejected or
// completed).
func sendUpdate[In, Out any](env *testsuite.TestWorkflowEnvironment, u Update[In, Out], id string, in In, done func(Out, error)) {
	env.UpdateWorkflow(u.Name, id, &testsuite.TestUpdateCallback{
		OnAccept: func() {},
		OnReject: func(err error) {
			var zero Out
			done(zero, err)
		},
		OnComplete: func(v interface{}, err error) {
			out, _ := v.(Out)
			done(out, err)
		},
	}, in)
}

// ask queries env's workflow through q.
func ask[Out any](env *testsuite.TestWorkflowEnvironment, q Query[Out]) (Out, error) {
	var out Out
	v, err := env.QueryWorkflow(q.Name)
	if err == nil {
		err = v.Get(&out)
	}
	return out, err
}
