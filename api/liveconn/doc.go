// Package liveconn answers through a workspace's live SAP connectors: it resolves the caller's
// connections (with their SAP login) and maps connector failures to statuses.
package liveconn

import (
	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/sapconn"
)

// Live resolves a workspace's connections for the caller; SAP nil answers 503.
type Live struct {
	Access httpx.Access
	SAP    *sapconn.Resolver
}
