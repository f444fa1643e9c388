package workflows

import "go.temporal.io/sdk/temporal"

// Custom search attributes (keyword) every conversation and sync run carries, so operators
// can filter runs by workspace, agent and SAP connection in the Temporal UI.
var (
	SearchWorkspaceID  = temporal.NewSearchAttributeKeyKeyword("WorkspaceId")
	SearchAgentID      = temporal.NewSearchAttributeKeyKeyword("AgentId")
	SearchConnectionID = temporal.NewSearchAttributeKeyKeyword("ConnectionId")
)

// SearchAttributeNames lists the custom search attributes the namespace must have.
var SearchAttributeNames = []string{SearchWorkspaceID.GetName(), SearchAgentID.GetName(), SearchConnectionID.GetName()}
