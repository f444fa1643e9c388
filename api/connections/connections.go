package connections

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
	"github.com/sapagent/sapagent/internal/syncschedule"
)

type connectionRequest struct {
	Name         *string `json:"name"`
	SystemType   *string `json:"system_type"`
	ConnectorURL *string `json:"connector_url"`
	Environment  *string `json:"environment"`
	Simulated    *bool   `json:"simulated"`
	// CredentialMode: store.CredentialUserLoginRequired | CredentialTechnicalUserReads |
	// CredentialTechnicalUserAll (not on a production server).
	CredentialMode *string `json:"credential_mode"`
	// When the SAP index syncs: cron expressions (five fields) and an IANA time zone.
	SyncFullCron  *string `json:"sync_full_cron"`
	SyncDeltaCron *string `json:"sync_delta_cron"`
	SyncTimeZone  *string `json:"sync_timezone"`
}

// defaultCredentialMode: production requires each member's own SAP login; a development
// server lets its (usually simulated) technical user serve everyone, as the demo expects.
func defaultCredentialMode(production bool) string {
	if production {
		return store.CredentialUserLoginRequired
	}
	return store.CredentialTechnicalUserAll
}

// apply validates the request onto c (PATCH semantics: absent fields stay; creating: c is new).
func (r connectionRequest) apply(ctx *gin.Context, production, creating bool, c *store.Connection) bool {
	if r.Name != nil {
		name, ok := httpx.RequiredName(ctx, "name", *r.Name, 100)
		if !ok {
			return false
		}
		c.Name = name
	}
	if r.SystemType != nil {
		typ, ok := systemType(ctx, *r.SystemType)
		if !ok {
			return false
		}
		c.SystemType = typ
	}
	if r.ConnectorURL != nil {
		u := strings.TrimSpace(*r.ConnectorURL)
		if u != "" {
			parsed, err := url.Parse(u)
			if err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" || len(u) > 2048 {
				httpx.BadRequest(ctx, "invalid_url", "connector_url must be an http(s) URL (or empty for the built-in simulator)")
				return false
			}
		}
		c.ConnectorURL = u
	}
	if r.Environment != nil {
		switch *r.Environment {
		case "development", "test", "production":
			c.Environment = *r.Environment
		default:
			httpx.BadRequest(ctx, "invalid_environment", "environment must be development, test or production")
			return false
		}
	}
	if r.CredentialMode != nil {
		switch m := *r.CredentialMode; m {
		case store.CredentialUserLoginRequired, store.CredentialTechnicalUserReads:
			c.CredentialMode = m
		case store.CredentialTechnicalUserAll:
			if production {
				httpx.BadRequest(ctx, "credential_mode_not_allowed", "a production server never lets the technical user write for members without their own SAP login: use user_login_required or technical_user_reads")
				return false
			}
			c.CredentialMode = m
		default:
			httpx.BadRequest(ctx, "invalid_credential_mode", "credential_mode must be user_login_required, technical_user_reads or technical_user_all")
			return false
		}
	}
	if !r.applySync(ctx, c) {
		return false
	}
	if c.ConnectorURL != "" {
		if _, err := guardFor(production, *c).CheckResolved(ctx.Request.Context(), c.ConnectorURL); err != nil {
			httpx.BadRequest(ctx, "blocked_url", err.Error())
			return false
		}
	}
	return r.applySimulated(ctx, production, creating, c)
}

// applySync validates the sync schedule settings onto c.
func (r connectionRequest) applySync(ctx *gin.Context, c *store.Connection) bool {
	for _, f := range []struct {
		v   *string
		dst *string
	}{{r.SyncFullCron, &c.SyncFullCron}, {r.SyncDeltaCron, &c.SyncDeltaCron}} {
		if f.v == nil {
			continue
		}
		if err := syncschedule.ValidateCron(*f.v); err != nil {
			httpx.BadRequest(ctx, "invalid_schedule", err.Error())
			return false
		}
		*f.dst = strings.TrimSpace(*f.v)
	}
	if r.SyncTimeZone != nil {
		if err := syncschedule.ValidateTimeZone(*r.SyncTimeZone); err != nil {
			httpx.BadRequest(ctx, "invalid_schedule", err.Error())
			return false
		}
		c.SyncTimeZone = *r.SyncTimeZone
	}
	return true
}

// applySimulated decides whether the simulator answers for c. Production never simulates
// silently: a connection without a connector URL must say "simulated": true. In development
// one without a URL is simulated (and marked so); a URL always means a real connector.
func (r connectionRequest) applySimulated(ctx *gin.Context, production, creating bool, c *store.Connection) bool {
	switch {
	case r.Simulated != nil:
		c.Simulated = *r.Simulated
	case r.ConnectorURL != nil && c.ConnectorURL != "":
		c.Simulated = false // a real connector replaces the simulator
	}
	if c.Simulated && c.ConnectorURL != "" {
		httpx.BadRequest(ctx, "simulated_with_url", `a simulated connection has no connector_url: send "connector_url": "" with "simulated": true, or leave simulated out`)
		return false
	}
	if c.ConnectorURL != "" || c.Simulated {
		return true
	}
	if !production {
		c.Simulated = true
		return true
	}
	// Production, no URL, not simulated: refuse when this request makes it so; an older row
	// in that state may still be renamed (its tools answer with an error meanwhile).
	if creating || r.ConnectorURL != nil || r.Simulated != nil {
		httpx.BadRequest(ctx, "connector_url_required", `in production a connection needs a connector_url; to use the built-in simulated SAP system instead, send "simulated": true`)
		return false
	}
	return true
}

// systemType accepts ECC and S4HANA (also written S/4HANA, any case), or answers 400.
func systemType(c *gin.Context, v string) (string, bool) {
	switch t := strings.ToUpper(strings.ReplaceAll(v, "/", "")); t {
	case "ECC", "S4HANA":
		return t, true
	}
	httpx.BadRequest(c, "invalid_system_type", "system_type must be ECC or S4HANA")
	return "", false
}

// guardFor is the URL policy of a connection: production rules when the server or the
// connection is production.
func guardFor(serverProduction bool, c store.Connection) sap.Guard {
	return sap.Guard{Production: serverProduction || c.Environment == "production"}
}

func (s *Handler) listConnections(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	conns, err := s.Connections.ListConnections(c.Request.Context(), w.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "connections")
		return
	}
	httpx.All(c, conns)
}

func (s *Handler) createConnection(c *gin.Context) {
	w := httpx.WorkspaceOf(c)
	var req connectionRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	if req.Name == nil || req.SystemType == nil {
		httpx.BadRequest(c, "missing_field", "name and system_type are required")
		return
	}
	conn := store.Connection{WorkspaceID: w.ID, Environment: "development", CredentialMode: defaultCredentialMode(s.Production)}
	if !req.apply(c, s.Production, true, &conn) {
		return
	}
	created, err := s.Connections.CreateConnection(c.Request.Context(), conn)
	if err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return
	}
	// The connection exists only with its sync schedules: if Temporal refuses them, the row goes.
	if !s.Syncs.EnsureSchedules(c, created) {
		if err := s.Connections.DeleteConnection(context.WithoutCancel(c.Request.Context()), created.WorkspaceID, created.ID); err != nil {
			s.Log.Error("remove connection whose schedules failed", "connection", created.ID, "error", err)
		}
		return
	}
	c.JSON(http.StatusCreated, created)
}

func (s *Handler) getConnection(c *gin.Context) {
	if conn, ok := s.Access.Connection(c, false); ok {
		c.JSON(http.StatusOK, conn)
	}
}

func (s *Handler) updateConnection(c *gin.Context) {
	conn, ok := s.Access.Connection(c, true)
	if !ok {
		return
	}
	var req connectionRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	before := conn
	if !req.apply(c, s.Production, false, &conn) {
		return
	}
	// Schedules first: a spec Temporal refuses leaves the connection as it was.
	scheduleChanged := conn.SyncFullCron != before.SyncFullCron || conn.SyncDeltaCron != before.SyncDeltaCron || conn.SyncTimeZone != before.SyncTimeZone || conn.Name != before.Name
	if scheduleChanged && !s.Syncs.EnsureSchedules(c, conn) {
		return
	}
	updated, err := s.Connections.UpdateConnection(c.Request.Context(), conn)
	if err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return
	}
	c.JSON(http.StatusOK, updated)
}

func (s *Handler) deleteConnection(c *gin.Context) {
	conn, ok := s.Access.Connection(c, true)
	if !ok {
		return
	}
	// Its schedules go and its running sync is cancelled first; the index rows go with the
	// connection's row (ON DELETE CASCADE).
	if !s.Syncs.StopConnectionSyncs(c, conn) {
		return
	}
	if err := s.Connections.DeleteConnection(c.Request.Context(), conn.WorkspaceID, conn.ID); err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return
	}
	c.Status(http.StatusNoContent)
}

var secretName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

const maxSecretBytes = 8 << 10

func (s *Handler) listSecrets(c *gin.Context) {
	conn, ok := s.Access.Connection(c, true)
	if !ok {
		return
	}
	names, err := s.Connections.ListConnectionSecretNames(c.Request.Context(), conn.ID)
	if err != nil {
		s.Access.StoreFailed(c, err, "secrets")
		return
	}
	httpx.All(c, names)
}

type secretRequest struct {
	Value string `json:"value"`
}

// setSecret stores a write-only value (connector_key, host, sysnr, client, router…).
func (s *Handler) setSecret(c *gin.Context) {
	conn, ok := s.Access.Connection(c, true)
	if !ok {
		return
	}
	name := c.Param("name")
	if !secretName.MatchString(name) {
		httpx.BadRequest(c, "invalid_name", "secret name must be lower-case letters, digits and _ (max 64), starting with a letter")
		return
	}
	var req secretRequest
	if !httpx.DecodeJSON(c, 4*maxSecretBytes, &req) {
		return
	}
	if req.Value == "" || len(req.Value) > maxSecretBytes {
		httpx.BadRequest(c, "invalid_value", fmt.Sprintf("value must be 1 to %d bytes", maxSecretBytes))
		return
	}
	keyID, ct := s.Secrets.Seal([]byte(req.Value), secrets.ConnectionSecretAAD(conn.ID.String(), name))
	if err := s.Connections.SetConnectionSecret(c.Request.Context(), conn.ID, name, store.SealedValue{KeyID: keyID, Ciphertext: ct}); err != nil {
		s.Access.StoreFailed(c, err, "secret")
		return
	}
	c.JSON(http.StatusOK, gin.H{"name": name, "connection_id": conn.ID})
}

func (s *Handler) deleteSecret(c *gin.Context) {
	conn, ok := s.Access.Connection(c, true)
	if !ok {
		return
	}
	if err := s.Connections.DeleteConnectionSecret(c.Request.Context(), conn.ID, c.Param("name")); err != nil {
		s.Access.StoreFailed(c, err, "secret")
		return
	}
	c.Status(http.StatusNoContent)
}
