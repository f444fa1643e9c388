package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sapagent/sapagent/internal/secrets"
	"github.com/sapagent/sapagent/internal/store"
)

type credentialRequest struct {
	SAPUser  string `json:"sap_user"`
	Password string `json:"password"`
}

func (s *Server) listCredentials(c *gin.Context) {
	creds, err := s.Store.ListCredentials(c.Request.Context(), userOf(c))
	if err != nil {
		s.storeFailed(c, err, "credentials")
		return
	}
	all(c, creds)
}

// setCredential stores the caller's SAP login for a connection they can see; the password is
// encrypted and never returned.
func (s *Server) setCredential(c *gin.Context) {
	connID, ok := uuidParam(c, "connId", "connection")
	if !ok {
		return
	}
	var req credentialRequest
	if !decodeJSON(c, 16<<10, &req) {
		return
	}
	sapUser, ok := requiredName(c, "sap_user", strings.ToUpper(req.SAPUser), 40)
	if !ok {
		return
	}
	if req.Password == "" || len(req.Password) > 512 {
		badRequest(c, "invalid_password", "password must be 1 to 512 bytes")
		return
	}
	keyID, ct := s.Secrets.Seal([]byte(req.Password), secrets.CredentialAAD(userOf(c), connID.String()))
	cred, err := s.Store.SetCredential(c.Request.Context(), userOf(c), connID, sapUser, store.SealedValue{KeyID: keyID, Ciphertext: ct})
	if err != nil {
		s.storeFailed(c, err, "connection")
		return
	}
	c.JSON(http.StatusOK, cred)
}

func (s *Server) deleteCredential(c *gin.Context) {
	connID, ok := uuidParam(c, "connId", "connection")
	if !ok {
		return
	}
	if err := s.Store.DeleteCredential(c.Request.Context(), userOf(c), connID); err != nil {
		s.storeFailed(c, err, "credential")
		return
	}
	c.Status(http.StatusNoContent)
}
