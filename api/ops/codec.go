package ops

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/sapagent/sapagent/api/httpx"
)

// CodecCookie carries an operator's token for browsers that cannot send a header: the Temporal
// UI's codec option includeCredentials sends cookies, and the dev stack's UI sets this one.
const CodecCookie = "sapagent_codec"

// maxCodecBody bounds one encode/decode request: a page of payloads, each at most Temporal's
// 2 MiB, base64-encoded.
const maxCodecBody = 16 << 20

// CodecOptions configure the codec endpoint the Temporal UI (and `temporal --codec-endpoint`)
// calls to show workflow payloads in clear.
type CodecOptions struct {
	Codec     converter.PayloadCodec // nil: no codec routes
	Namespace string                 // the only namespace whose payloads it serves
	Operators []string               // user IDs (token sub) allowed to encode and decode
	Origins   []string               // browser origins (the Temporal UI's) allowed to call it
}

func (s *Handler) codecRoutes(api *gin.RouterGroup) {
	if s.Codec.Codec == nil {
		return
	}
	for _, op := range []string{"encode", "decode"} {
		api.OPTIONS("/codec/"+op, s.codecPreflight)
		api.POST("/codec/"+op, s.codecHandler(op))
	}
}

// codecHandler serves POST /api/codec/{encode,decode}: {"payloads":[…]} in, the same shape out,
// for operators only. The SDK's converter.NewPayloadCodecHTTPHandler answers errors as plain
// text; this one keeps the API's {"error","code"} shape and its own authentication.
func (s *Handler) codecHandler(op string) gin.HandlerFunc {
	return func(c *gin.Context) {
		if !s.codecCORS(c) {
			return
		}
		user, ok := s.codecOperator(c)
		if !ok {
			return
		}
		if ns := c.GetHeader("X-Namespace"); ns != "" && ns != s.Codec.Namespace {
			httpx.BadRequest(c, "unknown_namespace", fmt.Sprintf("this codec serves namespace %q only", s.Codec.Namespace))
			return
		}
		raw, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxCodecBody))
		if err != nil {
			httpx.BadRequest(c, "body_too_large", fmt.Sprintf("request body is larger than %d bytes", maxCodecBody))
			return
		}
		var in commonpb.Payloads
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, &in); err != nil {
			httpx.BadRequest(c, "invalid_json", `request body must be {"payloads":[{"metadata":{…},"data":"<base64>"}]}`)
			return
		}
		var out []*commonpb.Payload
		if op == "encode" {
			out, err = s.Codec.Codec.Encode(in.Payloads)
		} else {
			out, err = s.Codec.Codec.Decode(in.Payloads)
		}
		if err != nil {
			// The codec's errors name a key ID at most, never payload content.
			httpx.BadRequest(c, "invalid_payload", err.Error())
			return
		}
		body, err := protojson.Marshal(&commonpb.Payloads{Payloads: out})
		if err != nil {
			httpx.BadRequest(c, "invalid_payload", "payloads cannot be encoded as JSON")
			return
		}
		if op == "decode" {
			// An audit trail of who looked at conversation content (never the content).
			s.Log.Info("codec: payloads decoded", "user", user, "payloads", len(out))
		}
		c.Data(http.StatusOK, "application/json", body)
	}
}

// codecOperator authenticates the caller (bearer header, or the codec cookie) and requires an
// operator: everyone else gets 401 or 403.
func (s *Handler) codecOperator(c *gin.Context) (string, bool) {
	token := ""
	if h := c.GetHeader("Authorization"); h != "" {
		if scheme, tok, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			token = strings.TrimSpace(tok)
		}
	} else if ck, err := c.Cookie(CodecCookie); err == nil {
		token = ck
	}
	if token == "" {
		c.Header("WWW-Authenticate", `Bearer realm="sapagent"`)
		httpx.Fail(c, http.StatusUnauthorized, "unauthorized", "missing bearer token")
		return "", false
	}
	user, err := s.Auth.Verify(token)
	if err != nil {
		c.Header("WWW-Authenticate", `Bearer realm="sapagent", error="invalid_token"`)
		httpx.Fail(c, http.StatusUnauthorized, "unauthorized", "invalid token")
		return "", false
	}
	if !slices.Contains(s.Codec.Operators, user) {
		s.Log.Warn("codec: refused a caller who is not an operator", "user", user)
		httpx.Fail(c, http.StatusForbidden, "forbidden", "workflow payloads are shown to operators only (OPERATORS)")
		return "", false
	}
	return user, true
}

// codecCORS lets the configured Temporal UI origins call the codec with credentials. Any other
// browser origin is refused outright (not only hidden by CORS): the cookie must not work from it.
func (s *Handler) codecCORS(c *gin.Context) bool {
	origin := c.GetHeader("Origin")
	if origin == "" {
		return true // not a browser
	}
	if !slices.ContainsFunc(s.Codec.Origins, func(o string) bool { return strings.EqualFold(o, origin) }) {
		httpx.Fail(c, http.StatusForbidden, "origin_not_allowed", "origin "+origin+" may not call the codec (CODEC_ALLOWED_ORIGINS)")
		return false
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Credentials", "true")
	h.Add("Vary", "Origin")
	return true
}

func (s *Handler) codecPreflight(c *gin.Context) {
	if !s.codecCORS(c) {
		return
	}
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Methods", "POST")
	h.Set("Access-Control-Allow-Headers", "Content-Type, X-Namespace, Authorization, Authorization-Extras")
	h.Set("Access-Control-Max-Age", "600")
	c.Status(http.StatusNoContent)
}
