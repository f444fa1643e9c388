package connections

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/sap"
)

// connectorHealth checks that each connection's connector answers (or ?connection_id=).
func (s *Handler) connectorHealth(c *gin.Context) {
	conns, ok := s.Live.Connections(c)
	if !ok {
		return
	}
	only := c.Query("connection_id")
	out := []gin.H{}
	for _, conn := range conns {
		if only != "" && conn.ID != only {
			continue
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), 10*time.Second)
		start := time.Now()
		var info sap.SystemInfo
		err := conn.API.Call(ctx, sap.EndpointSystemInfo, struct{}{}, &info)
		cancel()
		h := gin.H{"connection_id": conn.ID, "name": conn.Name, "reachable": err == nil, "latency_ms": time.Since(start).Milliseconds()}
		if err != nil {
			h["error"] = sap.Describe(err)
		} else {
			h["system_id"], h["system_type"], h["release"] = info.SystemID, info.SystemType, info.Release
		}
		out = append(out, h)
	}
	if only != "" && len(out) == 0 {
		httpx.NotFound(c, "connection")
		return
	}
	c.JSON(http.StatusOK, gin.H{"data": out})
}

// testConnectionRequest names a saved connection.
type testConnectionRequest struct {
	ConnectionID string `json:"connection_id"`
}

// testConnection runs the connection and permission checks as the caller, with their stored
// SAP credentials.
func (s *Handler) testConnection(c *gin.Context) {
	var req testConnectionRequest
	if !httpx.DecodeJSON(c, 4<<10, &req) {
		return
	}
	conn, ok := s.Live.Connection(c, req.ConnectionID)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, runChecks(c.Request.Context(), conn.API, conn.SystemType))
}

// previewRequest is an unsaved connection, from a setup wizard.
type previewRequest struct {
	SystemType   string `json:"system_type"`
	ConnectorURL string `json:"connector_url"`
	ConnectorKey string `json:"connector_key"`
	SAPUser      string `json:"sap_user"`
	SAPPassword  string `json:"sap_password"`
	Environment  string `json:"environment"`
	Simulated    bool   `json:"simulated"` // no connector_url: check the built-in simulated system
}

// testConnectionPreview runs the same checks on settings that are not saved (workspace admins
// only: it makes the server call a URL of the caller's choosing, through the URL guard). The
// key and password are used for these calls and kept nowhere.
func (s *Handler) testConnectionPreview(c *gin.Context) {
	var req previewRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	typ, ok := systemType(c, req.SystemType)
	if !ok {
		return
	}
	req.SystemType = typ
	if len(req.SAPUser) > 40 || len(req.SAPPassword) > 200 || len(req.ConnectorKey) > 4096 || len(req.ConnectorURL) > 2048 {
		httpx.BadRequest(c, "invalid_field", "sap_user (40), sap_password (200), connector_key (4096) or connector_url (2048) is too long")
		return
	}
	if req.Environment == "" {
		req.Environment = "development"
	}
	if req.Environment != "development" && req.Environment != "test" && req.Environment != "production" {
		httpx.BadRequest(c, "invalid_environment", "environment must be development, test or production")
		return
	}
	url := strings.TrimSpace(req.ConnectorURL)
	if url != "" {
		if _, err := (sap.Guard{Production: s.Production || req.Environment == "production"}).CheckResolved(c.Request.Context(), url); err != nil {
			httpx.BadRequest(c, "blocked_url", err.Error())
			return
		}
	}
	if url != "" && req.Simulated {
		httpx.BadRequest(c, "simulated_with_url", "a simulated connection has no connector_url")
		return
	}
	if url == "" && !req.Simulated && s.Production {
		httpx.BadRequest(c, "connector_url_required", `in production a connection needs a connector_url; to check the built-in simulated SAP system instead, send "simulated": true`)
		return
	}
	if s.SAP == nil {
		httpx.Unavailable(c, "SAP connectivity")
		return
	}
	api, err := s.SAP.Connector(req.SystemType, req.Simulated, sap.Target{URL: url, ConnectorKey: req.ConnectorKey, SAPUser: strings.TrimSpace(req.SAPUser), SAPPassword: req.SAPPassword})
	if err != nil {
		httpx.Fail(c, http.StatusUnprocessableEntity, "connection_unusable", err.Error())
		return
	}
	c.JSON(http.StatusOK, runChecks(c.Request.Context(), api, req.SystemType))
}

// check is one step of a connection test.
type check struct {
	Name  string `json:"name"`
	OK    bool   `json:"ok"`
	MS    int64  `json:"ms"`
	Error string `json:"error,omitempty"`
	Info  string `json:"info,omitempty"`
}

// runChecks: reachability and logon (system info), the declared system type, table read
// permission (T000 via RFC_READ_TABLE), function metadata, repository search.
func runChecks(ctx context.Context, api sap.Connector, systemType string) gin.H {
	var checks []check
	step := func(name string, f func(context.Context) (string, error)) bool {
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		start := time.Now()
		info, err := f(cctx)
		ch := check{Name: name, OK: err == nil, MS: time.Since(start).Milliseconds(), Info: info}
		if err != nil {
			ch.Error = sap.Describe(err)
		}
		checks = append(checks, ch)
		return err == nil
	}
	var sysInfo sap.SystemInfo
	reachable := step("connect_and_logon", func(ctx context.Context) (string, error) {
		err := api.Call(ctx, sap.EndpointSystemInfo, struct{}{}, &sysInfo)
		return sysInfo.SystemID + " " + sysInfo.Release, err
	})
	if reachable {
		step("system_type", func(context.Context) (string, error) {
			if sysInfo.SystemType != systemType {
				return "", errors.New("the connection says " + systemType + " but the system is " + sysInfo.SystemType)
			}
			return sysInfo.SystemType, nil
		})
		step("read_table", func(ctx context.Context) (string, error) {
			var res sap.ReadTableResponse
			err := api.Call(ctx, sap.EndpointReadTable, sap.ReadTableRequest{Table: "T000", Fields: []string{"MANDT", "MTEXT"}, RowCount: 5}, &res)
			return "T000 readable", err
		})
		step("function_metadata", func(ctx context.Context) (string, error) {
			var fi sap.FunctionInterface
			err := api.Call(ctx, sap.EndpointFunctionInterface, sap.FunctionInterfaceRequest{Function: "RFC_READ_TABLE"}, &fi)
			return "RFC_READ_TABLE interface readable", err
		})
		step("repository_search", func(ctx context.Context) (string, error) {
			var res sap.SearchObjectsResponse
			err := api.Call(ctx, sap.EndpointSearchObjects, sap.SearchObjectsRequest{Query: "Z*", CustomOnly: true, Limit: 5}, &res)
			return "", err
		})
	}
	ok := true
	for _, ch := range checks {
		ok = ok && ch.OK
	}
	return gin.H{"ok": ok, "checks": checks}
}
