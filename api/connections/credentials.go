package connections

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/api/httpx"
	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

type credentialRequest struct {
	SAPUser  string `json:"sap_user"`
	Password string `json:"password"`
}

func (s *Handler) listCredentials(c *gin.Context) {
	creds, err := s.Connections.ListCredentials(c.Request.Context(), httpx.User(c))
	if err != nil {
		s.Access.StoreFailed(c, err, "credentials")
		return
	}
	httpx.All(c, creds)
}

// setCredential stores the caller's SAP login for a connection they can see; the password is
// encrypted and never returned.
func (s *Handler) setCredential(c *gin.Context) {
	connID, ok := httpx.UUIDParam(c, "connId", "connection")
	if !ok {
		return
	}
	var req credentialRequest
	if !httpx.DecodeJSON(c, 16<<10, &req) {
		return
	}
	sapUser, ok := httpx.RequiredName(c, "sap_user", strings.ToUpper(req.SAPUser), 40)
	if !ok {
		return
	}
	if req.Password == "" || len(req.Password) > 512 {
		httpx.BadRequest(c, "invalid_password", "password must be 1 to 512 bytes")
		return
	}
	keyID, ct := s.Secrets.Seal([]byte(req.Password), secrets.CredentialAAD(httpx.User(c), connID.String()))
	cred, err := s.Connections.SetCredential(c.Request.Context(), httpx.User(c), connID, sapUser, store.SealedValue{KeyID: keyID, Ciphertext: ct})
	if err != nil {
		s.Access.StoreFailed(c, err, "connection")
		return
	}
	c.JSON(http.StatusOK, cred)
}

func (s *Handler) deleteCredential(c *gin.Context) {
	connID, ok := httpx.UUIDParam(c, "connId", "connection")
	if !ok {
		return
	}
	if err := s.Connections.DeleteCredential(c.Request.Context(), httpx.User(c), connID); err != nil {
		s.Access.StoreFailed(c, err, "credential")
		return
	}
	c.Status(http.StatusNoContent)
}
