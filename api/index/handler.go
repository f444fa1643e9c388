// Package index answers a workspace's SAP index: its reads (dashboard, diff, inventory, Clean
// Core, docs, source) and its syncs (runs, schedules).
package index

import (
	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/api/liveconn"
	"github.com/sapagent/sapagent/api/ratelimit"
	"github.com/sapagent/sapagent/internal/landscape"
	"github.com/sapagent/sapagent/internal/store"
)

// Reads holds what the index's read routes use.
type Reads struct {
	httpx.Deps
	Store   *store.Store // the index's reads run over the pool (landscape.Reader)
	Limiter *ratelimit.Limiter
	Cache   *landscape.Cache // figures over whole SAP indexes, per index version
	Live    liveconn.Live    // /source falls back to the live connector
	// IndexReadsPerMinute and IndexReadsPerWorkspaceMinute budget the GETs that read over whole
	// SAP indexes, per user and per workspace (0: the defaults in landscape.go).
	IndexReadsPerMinute          int
	IndexReadsPerWorkspaceMinute int
}

// Mount adds the read routes.
func (s *Reads) Mount(a *gin.RouterGroup) {
	// /source validates its query first and checks membership only where it reads the index.
	a.GET("/workspaces/:id/source", s.getSource)

	member := a.Group("/workspaces/:id", s.Access.Member)
	member.GET("/clean-core/objects/:type/*name", s.getCleanCoreObject)
	member.GET("/docs", s.getDocs)
	member.GET("/docs/:kind/*subject", s.getDoc)

	// The reads over whole indexes (ReadRoutes) also spend the index-read budgets.
	budgeted := member.Group("", s.indexReadBudget)
	budgeted.GET("/dashboard", s.getDashboard)
	budgeted.GET("/dashboard/diff", s.getDashboardDiff)
	budgeted.GET("/dashboard/objects", s.getDashboardObjects)
	budgeted.GET("/clean-core", s.getCleanCore)
}

// Syncs holds what the sync routes use.
type Syncs struct {
	httpx.Deps
	Store *store.Store // connections, and the runs through sapindex over the pool
}

// Mount adds the sync routes.
func (s *Syncs) Mount(a *gin.RouterGroup) {
	// A run's and a schedule's routes resolve the workspace with what they name, in their handlers.
	a.GET("/workspaces/:id/sync-runs/:runId", s.getSyncRun)
	a.POST("/workspaces/:id/sync-runs/:runId/cancel", s.cancelSyncRun)
	a.POST("/workspaces/:id/sync-schedules/:connId/:mode/:action", s.scheduleAction)

	member := a.Group("/workspaces/:id", s.Access.Member)
	member.GET("/index", s.indexStatus)
	member.GET("/sync-runs", s.listSyncRuns)
	member.GET("/sync-schedules", s.listSyncSchedules)
	a.POST("/workspaces/:id/index", s.Access.Admin, s.startSync)
}
