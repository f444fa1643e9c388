// Package index answers a workspace's SAP index: its reads (dashboard, diff, inventory, Clean
// Core, docs, source) and its syncs (runs, schedules).
package index

import (
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"
	"go.temporal.io/sdk/client"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/ratelimit"
	"github.com/sapagent/sapagent/api/sapconn"
	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/store"
)

// Reads holds what the index's read routes use.
type Reads struct {
	Access  httpx.Access
	Store   *store.Store
	Limiter *ratelimit.Limiter
	Cache   *landscape.Cache // figures over whole SAP indexes, per index version
	Live    sapconn.Live     // /source falls back to the live connector
	// IndexReadsPerMinute and IndexReadsPerWorkspaceMinute budget the GETs that read over whole
	// SAP indexes, per user and per workspace (0: the defaults in landscape.go).
	IndexReadsPerMinute          int
	IndexReadsPerWorkspaceMinute int
}

// Mount adds the read routes.
func (s *Reads) Mount(a *gin.RouterGroup) {
	a.GET("/workspaces/:id/source", s.getSource)
	a.GET("/workspaces/:id/dashboard", s.getDashboard)
	a.GET("/workspaces/:id/dashboard/diff", s.getDashboardDiff)
	a.GET("/workspaces/:id/dashboard/objects", s.getDashboardObjects)
	a.GET("/workspaces/:id/clean-core", s.getCleanCore)
	a.GET("/workspaces/:id/clean-core/objects/:type/*name", s.getCleanCoreObject)
	a.GET("/workspaces/:id/docs", s.getDocs)
	a.GET("/workspaces/:id/docs/:kind/*subject", s.getDoc)
}

// Syncs holds what the sync routes use.
type Syncs struct {
	Access          httpx.Access
	Store           *store.Store
	Temporal        client.Client
	TaskQueue       string
	TemporalTimeout time.Duration
	Log             *slog.Logger
}

// Mount adds the sync routes.
func (s *Syncs) Mount(a *gin.RouterGroup) {
	a.GET("/workspaces/:id/index", s.indexStatus)
	a.POST("/workspaces/:id/index", s.startSync)
	a.GET("/workspaces/:id/sync-runs", s.listSyncRuns)
	a.GET("/workspaces/:id/sync-runs/:runId", s.getSyncRun)
	a.POST("/workspaces/:id/sync-runs/:runId/cancel", s.cancelSyncRun)
	a.GET("/workspaces/:id/sync-schedules", s.listSyncSchedules)
	a.POST("/workspaces/:id/sync-schedules/:connId/:mode/:action", s.scheduleAction)
}
