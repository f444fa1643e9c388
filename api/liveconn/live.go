package liveconn

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/sap"
	"github.com/sapagent/sapagent/internal/sapconn"
)

// Failed answers a connector failure with a status that says whose problem it is. SAP's
// own refusals are 4xx for the caller to act on; an unreachable or slow connector is 502/504.
func Failed(c *gin.Context, err error) {
	var se *sap.Error
	var ie *sapconn.IdentityError
	switch {
	case errors.Is(err, sap.ErrBlocked):
		httpx.Fail(c, http.StatusBadRequest, "blocked_url", err.Error())
	case errors.As(err, new(*sapconn.NoConnectorURLError)):
		httpx.Fail(c, http.StatusUnprocessableEntity, "connection_unusable", err.Error())
	case errors.As(err, &ie):
		httpx.Fail(c, http.StatusForbidden, ie.Code, ie.Message)
	case errors.As(err, &se):
		msg := sap.Describe(err)
		switch se.Code {
		case sap.ErrNotFound:
			httpx.Fail(c, http.StatusNotFound, "sap_not_found", msg)
		case sap.ErrAuthorization:
			httpx.Fail(c, http.StatusForbidden, "sap_authorization", msg)
		case sap.ErrLogonFailed, sap.ErrConnectorKey:
			httpx.Fail(c, http.StatusUnprocessableEntity, "sap_logon_failed", msg)
		case sap.ErrTimeout:
			httpx.Fail(c, http.StatusGatewayTimeout, "connector_timeout", msg)
		case sap.ErrSystemUnavailable:
			httpx.Fail(c, http.StatusBadGateway, "connector_unavailable", msg)
		default:
			httpx.Fail(c, http.StatusUnprocessableEntity, "sap_error", msg)
		}
	default:
		httpx.Fail(c, http.StatusBadGateway, "connector_unavailable", "the connector could not be reached: "+err.Error())
	}
}

// Connections resolves the workspace's connections for the caller (with their SAP login).
func (l Live) Connections(c *gin.Context) ([]sapconn.Conn, bool) {
	w, ok := l.Access.Workspace(c, "id", false)
	if !ok {
		return nil, false
	}
	if l.SAP == nil {
		httpx.Unavailable(c, "SAP connectivity")
		return nil, false
	}
	conns, err := l.SAP.Connections(c.Request.Context(), w.ID, httpx.User(c))
	if err != nil {
		httpx.Fail(c, http.StatusUnprocessableEntity, "connection_unusable", err.Error())
		return nil, false
	}
	return conns, true
}

// Connection resolves the connection named by ?connection_id= (or the only one) for the caller.
func (l Live) Connection(c *gin.Context, connID string) (sapconn.Conn, bool) {
	conns, ok := l.Connections(c)
	if !ok {
		return sapconn.Conn{}, false
	}
	if len(conns) == 0 {
		httpx.Fail(c, http.StatusNotFound, "not_found", "this workspace has no SAP connection")
		return sapconn.Conn{}, false
	}
	if connID == "" {
		if len(conns) == 1 {
			return conns[0], true
		}
		httpx.BadRequest(c, "missing_field", "connection_id is required when the workspace has several connections")
		return sapconn.Conn{}, false
	}
	for _, conn := range conns {
		if conn.ID == connID {
			return conn, true
		}
	}
	httpx.NotFound(c, "connection")
	return sapconn.Conn{}, false
}
